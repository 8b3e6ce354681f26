import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { call, createTestKey, createTestOrg, newIdempotencyKey, startTestApp, testDb, type TestApp, type TestOrg } from '../helpers/context.ts';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const solid = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 20, g: 90, b: 160 } } });
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('Branding: GET /v1/branding, PUT and DELETE /v1/branding/logo', () => {
  let t: TestApp;
  let png: Buffer;
  before(async () => {
    t = await startTestApp();
    png = await solid(320, 100).png().toBuffer();
  });
  after(() => t.close());

  const put = (org: TestOrg, body: unknown, opts: { key?: string; idempotencyKey?: string } = {}) =>
    call(t.app, 'PUT', '/v1/branding/logo', { key: opts.key ?? org.apiKey, body, ...(opts.idempotencyKey ? { idempotencyKey: opts.idempotencyKey } : {}) });
  const get = (org: TestOrg, key = org.apiKey) => call(t.app, 'GET', '/v1/branding', { key });
  const stored = async (org: TestOrg) => [
    ...(await testDb().db.sql<{ variant: string; sha256: string; mime: string; content: Buffer; width: number; height: number }[]>`
      SELECT l.variant, i.sha256, i.mime, i.content, i.width, i.height FROM branding_logos l
      JOIN branding_images i ON i.organization_id = l.organization_id AND i.sha256 = l.sha256
      WHERE l.organization_id = ${org.organizationId} ORDER BY l.variant`),
  ];
  /** Nothing at all stored for the organisation: no pointer and no image. */
  const assertNothingStored = async (org: TestOrg) => {
    assert.deepEqual(await stored(org), []);
    const [images] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM branding_images WHERE organization_id = ${org.organizationId}`;
    assert.equal(images!.n, 0);
  };

  function assertLogoInvalid(res: Awaited<ReturnType<typeof call>>, reason: RegExp): void {
    assert.equal(res.status, 422, res.raw);
    assert.equal(res.body.error.code, 'logo_invalid');
    assert.match(res.body.error.message, reason);
    assert.equal(res.body.error.details.length, 1);
    assert.equal(res.body.error.details[0].path, '/data');
    assert.match(res.body.error.details[0].message, reason);
  }

  it('a new organisation has no logos', async () => {
    const org = await createTestOrg();
    const res = await get(org);
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, { data: { light: null, dark: null }, meta: {} });
  });

  it('stores a PNG as the light logo by default and answers with the branding status, exactly as GET shows it', async () => {
    const org = await createTestOrg();
    const res = await put(org, { data: png.toString('base64'), mime: 'image/png' });
    assert.equal(res.status, 200, res.raw);
    const light = res.body.data.light;
    assert.match(light.updatedAt, ISO);
    assert.deepEqual(res.body, {
      data: { light: { mime: 'image/png', bytes: png.length, sha256: sha256(png), width: 320, height: 100, updatedAt: light.updatedAt }, dark: null },
      meta: {},
    });
    assert.deepEqual((await get(org)).body, { data: res.body.data, meta: {} });
    const [row] = await stored(org);
    assert.ok(row!.content.equals(png), 'a raster image is stored exactly as uploaded');
    assert.equal(row!.variant, 'light');
  });

  it('stores a JPEG and a WebP, each checked against its own type', async () => {
    const org = await createTestOrg();
    const jpeg = await solid(640, 480).jpeg().toBuffer();
    const webp = await solid(1000, 250).webp().toBuffer();
    const a = await put(org, { data: jpeg.toString('base64'), mime: 'image/jpeg', variant: 'light' });
    assert.equal(a.status, 200, a.raw);
    const b = await put(org, { data: webp.toString('base64'), mime: 'image/webp', variant: 'dark' });
    assert.equal(b.status, 200, b.raw);
    const res = await get(org);
    assert.deepEqual(res.body.data, {
      light: { mime: 'image/jpeg', bytes: jpeg.length, sha256: sha256(jpeg), width: 640, height: 480, updatedAt: a.body.data.light.updatedAt },
      dark: { mime: 'image/webp', bytes: webp.length, sha256: sha256(webp), width: 1000, height: 250, updatedAt: b.body.data.dark.updatedAt },
    });
  });

  it('refuses bytes that are not the named type (magic bytes decide), junk and bad base64 with 422 logo_invalid, storing nothing', async () => {
    const org = await createTestOrg();
    assertLogoInvalid(await put(org, { data: png.toString('base64'), mime: 'image/jpeg' }), /PNG image, not JPEG/);
    assertLogoInvalid(await put(org, { data: png.toString('base64'), mime: 'image/webp' }), /PNG image, not WebP/);
    const jpeg = await solid(10, 10).jpeg().toBuffer();
    assertLogoInvalid(await put(org, { data: jpeg.toString('base64'), mime: 'image/png' }), /JPEG image, not PNG/);
    assertLogoInvalid(await put(org, { data: Buffer.from('GIF89a is not what it says').toString('base64'), mime: 'image/png' }), /not a PNG image/);
    const gif = await solid(10, 10).gif().toBuffer();
    assertLogoInvalid(await put(org, { data: gif.toString('base64'), mime: 'image/png' }), /GIF image, not PNG/);
    assertLogoInvalid(await put(org, { data: 'not base64!', mime: 'image/png' }), /not base64/);
    assertLogoInvalid(await put(org, { data: `${png.toString('base64').slice(0, 40)}\n${png.toString('base64').slice(40)}`, mime: 'image/png' }), /not base64/);
    assertLogoInvalid(await put(org, { data: `data:image/png;base64,${png.toString('base64')}`, mime: 'image/png' }), /without a data: URL prefix/);
    await assertNothingStored(org);
  });

  it('refuses a truncated or corrupt PNG: the whole image must decode, not only its header', async () => {
    const org = await createTestOrg();
    const big = await solid(400, 400).png().toBuffer();
    const truncated = big.subarray(0, big.length - 40);
    // The header still says PNG, 400 × 400: only decoding every pixel finds the loss.
    assert.equal((await sharp(truncated).metadata()).width, 400);
    assertLogoInvalid(await put(org, { data: truncated.toString('base64'), mime: 'image/png' }), /does not decode completely/);
    const corrupt = Buffer.from(big);
    for (let i = 60; i < 90; i++) corrupt[i] = corrupt[i]! ^ 0xff;
    assertLogoInvalid(await put(org, { data: corrupt.toString('base64'), mime: 'image/png' }), /PNG/);
    const jpeg = await solid(300, 300).jpeg().toBuffer();
    assertLogoInvalid(await put(org, { data: jpeg.subarray(0, jpeg.length - 200).toString('base64'), mime: 'image/jpeg' }), /JPEG image does not decode completely/);
    await assertNothingStored(org);
  });

  it('takes 4000 pixels and refuses 4001 in either direction', async () => {
    const org = await createTestOrg();
    const edge = await solid(4000, 2).png().toBuffer();
    const ok = await put(org, { data: edge.toString('base64'), mime: 'image/png' });
    assert.equal(ok.status, 200, ok.raw);
    assert.equal(ok.body.data.light.width, 4000);
    const wide = await solid(4001, 2).png().toBuffer();
    assertLogoInvalid(await put(org, { data: wide.toString('base64'), mime: 'image/png' }), /4001 × 2 pixels; at most 4000 × 4000/);
    const tall = await solid(2, 4001).webp().toBuffer();
    assertLogoInvalid(await put(org, { data: tall.toString('base64'), mime: 'image/webp' }), /2 × 4001 pixels/);
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4001" height="10"><rect width="5" height="5"/></svg>');
    assertLogoInvalid(await put(org, { data: svg.toString('base64'), mime: 'image/svg+xml' }), /4001 × 10 pixels/);
    // A header claiming 60 000 × 60 000 (over sharp's default pixel limit) is refused by its size, read from the
    // header alone: nothing is decoded. (IHDR: width and height at bytes 16 and 20, its CRC over bytes 12-28 at 29.)
    const claim = Buffer.from(edge);
    claim.writeUInt32BE(60_000, 16);
    claim.writeUInt32BE(60_000, 20);
    claim.writeUInt32BE(crc32(claim.subarray(12, 29)), 29);
    assertLogoInvalid(await put(org, { data: claim.toString('base64'), mime: 'image/png' }), /60000 × 60000 pixels; at most 4000 × 4000/);
    const huge = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="5" height="5"/></svg>');
    assertLogoInvalid(await put(org, { data: huge.toString('base64'), mime: 'image/svg+xml' }), /100000 × 100000 pixels/);
    assert.equal((await get(org)).body.data.light.sha256, sha256(edge), 'the refused uploads left the logo alone');
  });

  it('refuses an image over 512 KiB decoded; 413 payload_too_large for a body over 1 MiB', async () => {
    const org = await createTestOrg();
    // Noise does not compress: about 600 KB of PNG, under 1 MiB of body.
    const noisy = await sharp(randomBytes(460 * 460 * 3), { raw: { width: 460, height: 460, channels: 3 } }).png().toBuffer();
    assert.ok(noisy.length > 512 * 1024 && noisy.length * (4 / 3) < 1024 * 1024, `${noisy.length} bytes`);
    assertLogoInvalid(await put(org, { data: noisy.toString('base64'), mime: 'image/png' }), /larger than 524288 bytes \(512 KiB\) decoded/);
    const huge = randomBytes(800 * 1024).toString('base64');
    const res = await put(org, { data: huge, mime: 'image/png' });
    assert.equal(res.status, 413, res.raw);
    assert.equal(res.body.error.code, 'payload_too_large');
    await assertNothingStored(org);
  });

  it('stores an SVG sanitised: no script, event attribute, external reference or foreignObject; GET has the sanitised hash', async () => {
    const org = await createTestOrg();
    const upload =
      '<?xml version="1.0" encoding="UTF-8"?>\n' +
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 240 80" onload="alert(1)">' +
      '<script>alert(2)</script>' +
      '<style>.b{fill:#0a5}</style><style>@import url(https://evil.example/x.css);</style>' +
      '<defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient><path id="p" d="M0 0h10v10z"/></defs>' +
      '<rect class="b" width="240" height="80" fill="url(#g)" onclick="steal()"/>' +
      '<rect width="5" height="5" style="fill:url(https://evil.example/f.svg#x)"/>' +
      '<a href="https://evil.example/"><text x="10" y="40">Bager &amp; Co</text></a>' +
      '<image href="https://evil.example/track.png" width="1" height="1"/>' +
      '<use xlink:href="https://evil.example/sprite.svg#logo"/><use href="#p"/>' +
      '<foreignObject width="10" height="10"><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>' +
      '</svg>';
    const res = await put(org, { data: Buffer.from(upload).toString('base64'), mime: 'image/svg+xml' });
    assert.equal(res.status, 200, res.raw);
    const [row] = await stored(org);
    const text = row!.content.toString('utf8');
    assert.equal(
      text,
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 240 80">' +
        '<style>.b{fill:#0a5}</style>' +
        '<defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient><path id="p" d="M0 0h10v10z"/></defs>' +
        '<rect class="b" width="240" height="80" fill="url(#g)"/>' +
        '<rect width="5" height="5"/>' +
        '<a><text x="10" y="40">Bager &amp; Co</text></a>' +
        '<image width="1" height="1"/>' +
        '<use/><use href="#p"/>' +
        '</svg>',
    );
    assert.deepEqual(res.body.data.light, {
      mime: 'image/svg+xml', bytes: row!.content.length, sha256: sha256(row!.content), width: 240, height: 80, updatedAt: res.body.data.light.updatedAt,
    });
    assert.notEqual(res.body.data.light.sha256, sha256(Buffer.from(upload)));
    assert.deepEqual((await get(org)).body.data, res.body.data);
  });

  it('takes the size of an SVG from width and height; refuses one that is not XML, not an SVG, or has nothing left', async () => {
    const org = await createTestOrg();
    const sized = await put(org, { data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="120.5" height="30"><circle r="4"/></svg>').toString('base64'), mime: 'image/svg+xml' });
    assert.equal(sized.status, 200, sized.raw);
    assert.deepEqual([sized.body.data.light.width, sized.body.data.light.height], [121, 30]);
    const svg = (s: string) => ({ data: Buffer.from(s).toString('base64'), mime: 'image/svg+xml' });
    assertLogoInvalid(await put(org, svg('<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>')), /not well-formed XML/);
    assertLogoInvalid(await put(org, svg('just text, no markup')), /not well-formed XML/);
    assertLogoInvalid(await put(org, { data: png.toString('base64'), mime: 'image/svg+xml' }), /not (UTF-8 text|well-formed XML)/);
    assertLogoInvalid(await put(org, svg('<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>')), /root element must be <svg> in the SVG namespace/);
    assertLogoInvalid(await put(org, svg('<svg viewBox="0 0 10 10"><rect width="1" height="1"/></svg>')), /root element must be <svg> in the SVG namespace/);
    assert.equal((await get(org)).body.data.light.width, 121, 'the refused uploads left the logo alone');
  });

  it('refuses an SVG with more than 5000 elements or nested more than 100 deep, from its text before parsing it', async () => {
    const org = await createTestOrg();
    const svg = (s: string) => ({ data: Buffer.from(s).toString('base64'), mime: 'image/svg+xml' });
    const open = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">';
    // 70 000 flat elements in 280 KB (under 512 KiB): quadratic in the old element walk, minutes of a blocked loop.
    const flat = open + '<g/>'.repeat(70_000) + '</svg>';
    assert.ok(flat.length < 512 * 1024);
    assertLogoInvalid(await put(org, svg(flat)), /the SVG has more than 5000 elements/);
    // 20 000 nested elements: the parsers' recursion ran out of stack after half a minute.
    assertLogoInvalid(await put(org, svg(open + '<g>'.repeat(20_000) + '</g>'.repeat(20_000) + '</svg>')), /the SVG nests elements more than 100 deep/);
    // The edges: the root and 4999 more elements are taken, one more is not; the root and 99 nested levels are taken.
    const most = await put(org, svg(open + '<g/>'.repeat(4999) + '</svg>'));
    assert.equal(most.status, 200, most.raw);
    assertLogoInvalid(await put(org, svg(open + '<g/>'.repeat(5000) + '</svg>')), /more than 5000 elements/);
    const deepest = await put(org, svg(open + '<g>'.repeat(99) + '<rect width="1" height="1"/>' + '</g>'.repeat(99) + '</svg>'));
    assert.equal(deepest.status, 200, deepest.raw);
    assertLogoInvalid(await put(org, svg(open + '<g>'.repeat(100) + '<rect width="1" height="1"/>' + '</g>'.repeat(100) + '</svg>')), /more than 100 deep/);
    // Start tags inside a quoted attribute value's `>` or in a comment do not count; self-closing tags add no depth.
    const commented = await put(org, svg(open + '<!--' + '<g>'.repeat(6000) + '--><rect width="1" height="1" class="a>b"/></svg>'));
    assert.equal(commented.status, 200, commented.raw);
    assert.equal((await get(org)).body.data.light.sha256, commented.body.data.light.sha256, 'the refused uploads left the logo alone');
  });

  it('refuses <use> chains and more than 100 <use> elements, which would multiply what every PDF draws', async () => {
    const org = await createTestOrg();
    const svg = (s: string) => ({ data: Buffer.from(s).toString('base64'), mime: 'image/svg+xml' });
    const open = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10">';
    // Nine levels of eight <use>s each: 8^9 (134 million) rectangles drawn from 83 elements.
    let levels = '<g id="l0"><rect width="1" height="1"/></g>';
    for (let i = 1; i <= 9; i++) levels += `<g id="l${i}">${`<use href="#l${i - 1}"/>`.repeat(8)}</g>`;
    assertLogoInvalid(await put(org, svg(`${open}<defs>${levels}</defs><use href="#l9"/></svg>`)), /may not point at an element that is or holds a <use>/);
    // The same with xlink:href, and a <use> that points at itself.
    assertLogoInvalid(await put(org, svg(`${open}<g id="a"><use xlink:href="#b"/></g><g id="b"><rect width="1" height="1"/></g><use xlink:href="#a"/></svg>`)), /is or holds a <use>/);
    assertLogoInvalid(await put(org, svg(`${open}<use id="me" href="#me"/></svg>`)), /is or holds a <use>/);
    assertLogoInvalid(await put(org, svg(`${open}<rect id="r" width="1" height="1"/>${'<use href="#r"/>'.repeat(101)}</svg>`)), /more than 100 <use> elements/);
    // A symbol used a hundred times is a logo like any other.
    const symbols = await put(org, svg(`${open}<symbol id="s"><rect width="1" height="1"/></symbol>${'<use href="#s"/>'.repeat(100)}</svg>`));
    assert.equal(symbols.status, 200, symbols.raw);
  });

  it('sanitises the SVG as the XML parser reads it: markup the HTML parser would nest differently is neither lost nor a way past the limits', async () => {
    const org = await createTestOrg();
    const svg = (s: string) => ({ data: Buffer.from(s).toString('base64'), mime: 'image/svg+xml' });
    const open = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">';
    // In HTML `<!-->` closes the comment and 20 000 nested <g> would follow; in XML all of it is one comment.
    const comment = await put(org, svg(open + '<!--><g>' + '<g>'.repeat(20_000) + '--><rect width="1" height="1"/></svg>'));
    assert.equal(comment.status, 200, comment.raw);
    assert.equal((await stored(org))[0]!.content.toString('utf8'), open + '<rect width="1" height="1"/></svg>');
    // Inside <title> the HTML parser ignores `/>` (what follows was nested inside an HTML <g> and stripped); a CDATA
    // section in <style> is kept as the text it holds.
    const title = await put(org, svg(open + '<title>Bager<g/></title><style><![CDATA[.b{fill:#0a5}]]></style><rect class="b" width="1" height="1"/></svg>'));
    assert.equal(title.status, 200, title.raw);
    assert.equal(
      (await stored(org))[0]!.content.toString('utf8'),
      open + '<title>Bager<g/></title><style>.b{fill:#0a5}</style><rect class="b" width="1" height="1"/></svg>',
    );
  });

  it('drops CSS that loads from a string (image-set(), src(), image()) or holds a string inside a function, in style attributes and <style> elements', async () => {
    const org = await createTestOrg();
    const upload =
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">' +
      '<style>.a{fill:#123}</style>' +
      '<style>.m{mask-image:image-set("https://evil.example/a.png" 1x)}</style>' +
      '<style>@font-face{font-family:X;src:local(X)}.f{font-family:X;background:src("https://evil.example/f.woff")}</style>' +
      '<style>.w{mask-image:-WEBKIT-IMAGE-SET(var(--u) 1x);--u:"https://evil.example/v.png"}</style>' +
      '<rect width="1" height="1" style="mask-image:image-set(&quot;https://evil.example/b.png&quot; 1x)"/>' +
      '<rect width="2" height="2" style="mask-image:src(\'https://evil.example/c.png\')"/>' +
      '<rect width="3" height="3" style="mask-image:image(\'https://evil.example/d.png\')"/>' +
      '<rect width="4" height="4" style="mask:unknown-function(\'https://evil.example/e.png\')"/>' +
      '<rect width="5" height="5" mask="image-set(\'https://evil.example/g.png\' 1x)"/>' +
      '<text style="font-family:&quot;Open Sans&quot;, sans-serif;fill:url(\'#g\')">Bager\'s</text>' +
      '</svg>';
    const res = await put(org, { data: Buffer.from(upload).toString('base64'), mime: 'image/svg+xml' });
    assert.equal(res.status, 200, res.raw);
    const text = (await stored(org))[0]!.content.toString('utf8');
    assert.equal(
      text,
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">' +
        '<style>.a{fill:#123}</style>' +
        '<rect width="1" height="1"/><rect width="2" height="2"/><rect width="3" height="3"/><rect width="4" height="4"/><rect width="5" height="5"/>' +
        '<text style="font-family:&quot;Open Sans&quot;, sans-serif;fill:url(\'#g\')">Bager\'s</text>' +
        '</svg>',
    );
    assert.doesNotMatch(text, /evil/);
  });

  it('keeps light and dark apart; DELETE removes one variant (light by default) and answers 204 also when there is none', async () => {
    const org = await createTestOrg();
    const dark = await solid(50, 50).png().toBuffer();
    assert.equal((await put(org, { data: png.toString('base64'), mime: 'image/png' })).status, 200);
    const d = await put(org, { data: dark.toString('base64'), mime: 'image/png', variant: 'dark' });
    assert.equal(d.status, 200, d.raw);
    assert.equal(d.body.data.light.sha256, sha256(png));
    assert.equal(d.body.data.dark.sha256, sha256(dark));

    const del = await call(t.app, 'DELETE', '/v1/branding/logo?variant=dark', { key: org.apiKey });
    assert.equal(del.status, 204, del.raw);
    assert.equal(del.raw, '');
    const after = (await get(org)).body.data;
    assert.equal(after.dark, null);
    assert.equal(after.light.sha256, sha256(png));
    assert.equal((await call(t.app, 'DELETE', '/v1/branding/logo?variant=dark', { key: org.apiKey })).status, 204);

    assert.equal((await call(t.app, 'DELETE', '/v1/branding/logo', { key: org.apiKey })).status, 204);
    assert.deepEqual((await get(org)).body.data, { light: null, dark: null });
    assert.equal((await call(t.app, 'DELETE', '/v1/branding/logo', { key: org.apiKey })).status, 204);
    // The images stay (documents issued with them name them); only the pointers went.
    const [images] = await testDb().db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM branding_images WHERE organization_id = ${org.organizationId}`;
    assert.equal(images!.n, 2);

    const bad = await call(t.app, 'DELETE', '/v1/branding/logo?variant=blue', { key: org.apiKey });
    assert.equal(bad.status, 400, bad.raw);
    assert.equal(bad.body.error.code, 'validation_failed');
  });

  it('validates the body by schema: 400 validation_failed for a missing or unknown mime, an empty data, a bad variant, an extra field', async () => {
    const org = await createTestOrg();
    const data = png.toString('base64');
    for (const [body, path] of [
      [{ data }, '/mime'],
      [{ data, mime: 'image/gif' }, '/mime'],
      [{ data: '', mime: 'image/png' }, '/data'],
      [{ mime: 'image/png' }, '/data'],
      [{ data, mime: 'image/png', variant: 'blue' }, '/variant'],
      [{ data, mime: 'image/png', extra: 1 }, '/extra'],
    ] as const) {
      const res = await put(org, body);
      assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 60)}: ${res.raw}`);
      assert.equal(res.body.error.code, 'validation_failed');
      assert.ok(res.body.error.details.some((d: { path: string }) => d.path === path), res.raw);
    }
    const noKey = await call(t.app, 'PUT', '/v1/branding/logo', { key: org.apiKey, body: { data, mime: 'image/png' }, idempotencyKey: null });
    assert.equal(noKey.body.error.code, 'idempotency_key_missing');
  });

  it('is idempotent: a repeat with the key replays; the same image again under a new key changes nothing, updatedAt included @cluster', async () => {
    const org = await createTestOrg();
    const key = newIdempotencyKey();
    const body = { data: png.toString('base64'), mime: 'image/png' };
    const first = await put(org, body, { idempotencyKey: key });
    const replay = await put(org, body, { idempotencyKey: key });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.body, { ...first.body, meta: { replayed: true } });
    const conflict = await put(org, { ...body, variant: 'dark' }, { idempotencyKey: key });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.error.code, 'idempotency_conflict');
    const again = await put(org, body);
    assert.deepEqual(again.body.data, first.body.data);
    // A refusal is part of the key's history too.
    const badKey = newIdempotencyKey();
    const refused = await put(org, { data: png.toString('base64'), mime: 'image/jpeg' }, { idempotencyKey: badKey });
    assert.equal(refused.status, 422);
    const refusedAgain = await put(org, { data: png.toString('base64'), mime: 'image/jpeg' }, { idempotencyKey: badKey });
    assert.equal(refusedAgain.headers['idempotent-replayed'], 'true');
    assert.equal(refusedAgain.body.error.code, 'logo_invalid');
  });

  it('needs settings:write to change and settings:read to read', async () => {
    const org = await createTestOrg();
    const reader = await createTestKey(org, ['settings:read']);
    const body = { data: png.toString('base64'), mime: 'image/png' };
    const refused = await put(org, body, { key: reader });
    assert.equal(refused.status, 403, refused.raw);
    assert.equal(refused.body.error.code, 'insufficient_scope');
    const del = await call(t.app, 'DELETE', '/v1/branding/logo', { key: reader });
    assert.equal(del.status, 403);
    assert.equal(del.body.error.code, 'insufficient_scope');
    assert.equal((await get(org, reader)).status, 200);
    const other = await createTestKey(org, ['customers:read']);
    assert.equal((await get(org, other)).body.error.code, 'insufficient_scope');
    assert.equal((await call(t.app, 'GET', '/v1/branding')).status, 401);
    assert.equal((await call(t.app, 'GET', '/v1/branding?variant=light', { key: org.apiKey })).status, 400);
    await assertNothingStored(org);
  });

  it("keeps organisations apart: another organisation sees null and deleting its own logo leaves this one's @cluster", async () => {
    const a = await createTestOrg();
    const b = await createTestOrg();
    assert.equal((await put(a, { data: png.toString('base64'), mime: 'image/png' })).status, 200);
    // The same image uploaded by b is b's own row.
    assert.deepEqual((await get(b)).body.data, { light: null, dark: null });
    assert.equal((await call(t.app, 'DELETE', '/v1/branding/logo', { key: b.apiKey })).status, 204);
    assert.equal((await get(a)).body.data.light.sha256, sha256(png));
    assert.equal((await put(b, { data: png.toString('base64'), mime: 'image/png' })).status, 200);
    const [n] = await testDb().db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM branding_images WHERE sha256 = ${sha256(png)} AND organization_id IN (${a.organizationId}, ${b.organizationId})`;
    assert.equal(n!.n, 2);
  });
});
