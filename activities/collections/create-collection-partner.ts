import { resolve } from 'node:path';
import type { CollectionPartner } from '../../services/collections/partner-port.ts';
import type { Config } from '../../services/shared/config.ts';
import { createHttpCollectionPartner } from './http-partner.ts';
import { createLocalCollectionPartner, type CollectionPartnerLog } from './local-partner.ts';

/**
 * The collection partner's HTTP endpoint when COLLECTION_PARTNER_URL is set (COLLECTION_PARTNER_SECRET is then
 * required: a start error without it); otherwise hand-overs stay on this machine as JSON files under
 * DATA_DIR/collections, and the one log line at start says where, because nothing is sent. The secret is never logged.
 */
export function createCollectionPartner(
  config: Pick<Config, 'collectionPartnerUrl' | 'collectionPartnerSecret' | 'dataDir'>,
  log: CollectionPartnerLog,
): CollectionPartner {
  if (config.collectionPartnerUrl) {
    if (!config.collectionPartnerSecret) throw new Error('COLLECTION_PARTNER_SECRET is required with COLLECTION_PARTNER_URL');
    const url = new URL(config.collectionPartnerUrl);
    log('info', 'collection cases are handed over to the collection partner', { collectionPartner: `${url.protocol}//${url.host}` });
    return createHttpCollectionPartner({ url: config.collectionPartnerUrl, secret: config.collectionPartnerSecret, log });
  }
  const dir = resolve(config.dataDir, 'collections');
  log('info', `COLLECTION_PARTNER_URL is unset: collection cases are not sent to a partner but kept as JSON files in ${dir}`, { collectionDir: dir });
  return createLocalCollectionPartner(dir, log);
}
