import type { LogoUpload } from '../../contracts/branding.ts';
import type { MutationUseCase } from '../idempotency/run-mutation.ts';
import { checkLogo } from './check-logo.ts';
import { saveLogo } from './save-logo.ts';

/**
 * PUT /v1/branding/logo: the image is decoded and checked now, before any transaction opens (it is CPU work on up to
 * 16 megapixels), and saved in the mutation. A refusal is thrown inside the mutation, so it is answered in the
 * idempotency order like any other 422: a key already used for another request is 409, and the refusal is stored
 * under the key.
 */
export async function uploadLogo(organizationId: string, body: LogoUpload): Promise<MutationUseCase> {
  const checked = await checkLogo(body.data, body.mime).then(
    (logo) => ({ logo }),
    (error: unknown) => ({ error }),
  );
  return async (tx) => {
    if ('error' in checked) throw checked.error;
    return { status: 200, data: await saveLogo(tx, organizationId, body.variant ?? 'light', checked.logo) };
  };
}
