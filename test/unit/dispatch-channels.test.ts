import assert from 'node:assert/strict';
import { documentLetter, postalRecipient, sendDocument, type Channels, type Outbound, type Recipient } from '../../services/dispatch/channels.ts';
import { deliverDocument, type DocumentKind } from '../../services/dispatch/deliver-document.ts';
import { MailDeliveryError, type OutgoingMail } from '../../services/mail/mail-port.ts';
import { DomainError } from '../../services/shared/errors.ts';

/** The channel port's one vocabulary: what becomes of a document on each channel, and what is left to the retry. */
describe('dispatch: channels and the one deliverer', () => {
  const pdf = Buffer.from('%PDF-1.7');
  const mail = (to: { email: string }): OutgoingMail => ({
    from: { name: 'Bager Hansen ApS', address: 'no-reply@faktura.invalid' },
    replyTo: null,
    to: to.email,
    subject: 'Rykker',
    html: '<p>x</p>',
    text: 'x',
    attachments: [],
    messageId: 'reminder-1@faktura.invalid',
  });
  const seller = { name: 'Bager Hansen ApS', street: 'Bagergade 1', postalCode: '8000', city: null };
  const outbound: Outbound = { mail, letter: documentLetter({ id: 'letter-1', organizationId: 'org-1', documentSha256: 'ab'.repeat(32), pdf }, seller) };
  const byMail: Recipient = { channel: 'email', name: 'Ida', email: 'ida@kunde.dk' };
  const byLetter = postalRecipient('Karen', { street: 'Posthusvej 3', postalCode: '7100', city: 'Vejle', country: null })!;
  const channels = (over: Partial<Channels> = {}): Channels => ({
    mailer: { send: async (m) => ({ messageId: m.messageId, accepted: true, response: '250 ok' }) },
    letters: { send: async (l) => ({ reference: `ref-${l.id}` }) },
    ...over,
  });

  it('sends by mail and by letter, answering the reference each delivery record keeps', async () => {
    assert.deepEqual(await sendDocument(channels(), byMail, outbound), {
      kind: 'sent', channel: 'email', messageId: 'reminder-1@faktura.invalid', accepted: true, response: '250 ok',
    });
    const letters: unknown[] = [];
    const sent = await sendDocument(channels({ letters: { send: async (l) => (letters.push(l), { reference: 'ref-1' }) } }), byLetter, outbound);
    assert.deepEqual(sent, { kind: 'sent', channel: 'letter', reference: 'ref-1' });
    assert.deepEqual(letters, [{
      id: 'letter-1', organizationId: 'org-1', documentSha256: 'ab'.repeat(32), pdf,
      recipient: { name: 'Karen', street: 'Posthusvej 3', postalCode: '7100', city: 'Vejle', country: 'DK' },
      sender: { name: 'Bager Hansen ApS', street: 'Bagergade 1', postalCode: '8000', city: '' },
    }]);
  });

  it('a refusal for good is answered with its code; anything that may go through later is thrown for the retry', async () => {
    const refusing = channels({ mailer: { send: () => Promise.reject(new MailDeliveryError('550 no such user', { permanent: true, smtpCode: 550 })) } });
    assert.deepEqual(await sendDocument(refusing, byMail, outbound), { kind: 'refused', code: 'mail_rejected', reason: '550 no such user', smtpCode: 550 });
    const busy = channels({ mailer: { send: () => Promise.reject(new MailDeliveryError('451 try later', { permanent: false, smtpCode: 451 })) } });
    await assert.rejects(sendDocument(busy, byMail, outbound), /451 try later/);

    const rejecting = channels({ letters: { send: () => Promise.reject(new DomainError('letter_rejected', 'the letter service refused the letter: 422')) } });
    assert.deepEqual(await sendDocument(rejecting, byLetter, outbound), { kind: 'refused', code: 'letter_rejected', reason: 'the letter service refused the letter: 422' });
    const down = channels({ letters: { send: () => Promise.reject(new Error('the letter service answered 503')) } });
    await assert.rejects(sendDocument(down, byLetter, outbound), /503/);
  });

  it('a postal recipient needs a whole address', () => {
    assert.equal(postalRecipient('Bo', { street: 'Vej 1', postalCode: null, city: 'By', country: 'DK' }), null);
  });

  it('deliverDocument: a settled record sends nothing; nobody to send to is refused without a send', async () => {
    let sends = 0;
    const counting = channels({ mailer: { send: async (m) => (sends++, { messageId: m.messageId, accepted: true, response: '250' }) } });
    const kind = (settled: boolean, to: Recipient | null): DocumentKind<Channels, { to: Recipient | null }, string> => ({
      prepare: async () => (settled ? { settled: 'settled' } : { ready: { to } }),
      recipient: (ready) => ready.to ?? { kind: 'refused', code: 'customer_email_missing', reason: 'no e-mail' },
      outbound: () => outbound,
      answer: (outcome) => (outcome.kind === 'sent' ? `sent ${outcome.channel}` : `refused ${outcome.code}`),
    });
    assert.equal(await deliverDocument(kind(true, byMail), counting, 'r1'), 'settled');
    assert.equal(await deliverDocument(kind(false, null), counting, 'r1'), 'refused customer_email_missing');
    assert.equal(sends, 0);
    assert.equal(await deliverDocument(kind(false, byMail), counting, 'r1'), 'sent email');
    assert.equal(sends, 1);
  });
});
