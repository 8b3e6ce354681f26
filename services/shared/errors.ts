import { ErrorStatus, type ErrorCode } from '../../contracts/errors.ts';

export interface ErrorDetail {
  path: string;
  message: string;
  /** 422 installments_total_mismatch: what the instalments must add up to. */
  expectedOere?: number;
}

/**
 * The one error type of the service. Use cases throw it with a catalogue code; the API's error handler renders it.
 * Anything else that reaches the handler is an internal error and is never shown to the client.
 */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, opts: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.status = ErrorStatus[code];
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

export const notFound = (code: ErrorCode, what: string): DomainError =>
  new DomainError(code, `No ${what} with that id exists.`);
