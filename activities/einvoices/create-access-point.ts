import { resolve } from 'node:path';
import type { Config } from '../../services/shared/config.ts';
import type { EInvoiceAccessPoint, EInvoiceLog } from '../../services/einvoices/einvoice-port.ts';
import { createHttpAccessPoint } from './http-access-point.ts';
import { createLocalAccessPoint } from './local-access-point.ts';

/**
 * The access-point provider's HTTP API when EINVOICE_AP_URL is set; otherwise e-invoices stay on this machine as
 * files under DATA_DIR/einvoices, and the one log line at start says where, because nothing is delivered.
 */
export function createAccessPoint(config: Pick<Config, 'einvoiceApUrl' | 'einvoiceApKey' | 'dataDir'>, log: EInvoiceLog): EInvoiceAccessPoint {
  if (config.einvoiceApUrl) {
    if (!config.einvoiceApKey) throw new Error('EINVOICE_AP_KEY is required with EINVOICE_AP_URL');
    const url = new URL(config.einvoiceApUrl);
    log('info', 'e-invoices go out through the access point', { accessPoint: `${url.protocol}//${url.host}` });
    return createHttpAccessPoint({ url: config.einvoiceApUrl, apiKey: config.einvoiceApKey, log });
  }
  const dir = resolve(config.dataDir ?? '.data', 'einvoices');
  log('info', `EINVOICE_AP_URL is unset: e-invoices are not delivered but kept as files in ${dir}`, { einvoiceDir: dir });
  return createLocalAccessPoint(dir, log);
}
