import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope } from '../../../../contracts/common.ts';
import {
  BANK_STATEMENT_BODY_LIMIT, BankStatement, BankStatementEntry, BankStatementEntryListQuery, BankStatementEntryMatch,
} from '../../../../contracts/bank-statements.ts';
import { DomainError } from '../../../../services/shared/errors.ts';
import { getBankStatement } from '../../../bank-statements/get-bank-statement.ts';
import { importBankStatement } from '../../../bank-statements/import-bank-statement.ts';
import { listBankStatementEntries } from '../../../bank-statements/list-bank-statement-entries.ts';
import { matchBankStatementEntry } from '../../../bank-statements/match-bank-statement-entry.ts';
import { CamtError, readCamt053, type CamtStatements } from '../../../bank-statements/read-camt053.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const StatementParams = Type.Object({ statementId: Type.String({ description: 'Bank statement import id (UUID)' }) }, { additionalProperties: false });
const EntryParams = Type.Object({ entryId: Type.String({ description: 'Bank statement entry id (UUID)' }) }, { additionalProperties: false });
const tags = ['Bank statements'];

/** The media types a statement is sent as. */
const XML_TYPES = new Set(['application/xml', 'text/xml']);
const mediaType = (req: FastifyRequest): string => (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/** Reads the statement before the mutation: a document that is not a camt.053 one is refused like a validation error (not stored under the key). */
function readStatement(body: unknown): CamtStatements {
  try {
    return readCamt053(typeof body === 'string' ? body : '');
  } catch (err) {
    if (err instanceof CamtError) {
      throw new DomainError('invalid_statement', 'The body is not a camt.053 bank statement this API reads.', {
        details: [{ path: err.path, message: err.message }],
      });
    }
    throw err;
  }
}

export function bankStatementRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;

  // Its own scope: only this route reads XML bodies (every other route's body is JSON).
  void app.register(async (xml) => {
    xml.addContentTypeParser([...XML_TYPES], { parseAs: 'buffer', bodyLimit: BANK_STATEMENT_BODY_LIMIT }, (_req, body, done) => {
      // ISO 20022 messages are UTF-8; other bytes would be read as something the bank never sent.
      if (!isUtf8(body as Buffer)) {
        return done(new DomainError('invalid_statement', 'The body is not a camt.053 bank statement this API reads.', {
          details: [{ path: '', message: 'The document is not UTF-8 text' }],
        }), undefined);
      }
      // XML has no NUL character: refused here as what it is, not later as text PostgreSQL cannot hold.
      if ((body as Buffer).includes(0)) {
        return done(new DomainError('invalid_statement', 'The body is not a camt.053 bank statement this API reads.', {
          details: [{ path: '', message: 'The document holds a NUL character, which XML does not allow' }],
        }), undefined);
      }
      done(null, (body as Buffer).toString('utf8'));
    });

    xml.post<{ Body: string }>(
      '/bank-statements',
      {
        config: { scope: 'payments:write' },
        bodyLimit: BANK_STATEMENT_BODY_LIMIT,
        // Before the body is read: a statement is XML, whatever else the API takes.
        onRequest: (req, _reply, done) => {
          if (!XML_TYPES.has(mediaType(req))) return done(new DomainError('unsupported_media_type', 'A bank statement is sent as application/xml.'));
          done();
        },
        schema: {
          summary: 'Import a camt.053 bank statement',
          description:
            'The body is an ISO 20022 camt.053 document (`BkToCstmrStmt`, versions .001.02 to .001.08) as `application/xml`, at most ' +
            '5 MiB (413 payload_too_large). Every entry is recorded; booked DKK credits are matched to invoices (the FI-kort payment ' +
            'id in the creditor reference or any remittance text; else the number of exactly one open invoice in the unstructured ' +
            "remittance with the amount equal to its balance) and a matched entry's payment is booked as POST …/payments books one, " +
            'dated its booking date. An entry imported before is a `duplicate` and books nothing, however often or concurrently the ' +
            'document is sent. Not a camt.053 document (malformed XML, a DOCTYPE, another message): 400 invalid_statement.',
        tags,
        consumes: ['application/xml'],
        body: Type.String({ description: 'The camt.053 document' }),
        response: { 201: Envelope(BankStatement) },
      },
    },
    async (req, reply) => {
      const doc = readStatement(req.body);
      return mutate(deps, req, reply, importBankStatement(deps, req.auth.organizationId, doc));
    },
    );
  });

  app.get<{ Params: { statementId: string } }>(
    '/bank-statements/:statementId',
    {
      config: { scope: 'payments:read' },
      schema: {
        summary: 'Get a bank statement import',
        description: "The import with its entries' counts as they are now (a match by hand moves one from unmatched to matched).",
        tags,
        params: StatementParams,
        response: { 200: Envelope(BankStatement) },
      },
    },
    async (req) => ({ data: await db.read((sql) => getBankStatement(sql, req.auth.organizationId, req.params.statementId)), meta: {} }),
  );

  app.get<{ Params: { statementId: string }; Querystring: BankStatementEntryListQuery }>(
    '/bank-statements/:statementId/entries',
    {
      config: { scope: 'payments:read' },
      schema: {
        summary: "List a bank statement import's entries, in document order",
        tags,
        params: StatementParams,
        querystring: BankStatementEntryListQuery,
        response: { 200: ListEnvelope(BankStatementEntry) },
      },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) =>
        listBankStatementEntries(sql, keyring, req.auth.organizationId, req.params.statementId, req.query),
      );
      return { data: items, meta: { nextCursor } };
    },
  );

  app.post<{ Params: { entryId: string }; Body: BankStatementEntryMatch }>(
    '/bank-statement-entries/:entryId/match',
    {
      config: { scope: 'payments:write' },
      schema: {
        summary: 'Match an unmatched bank statement entry to an invoice',
        description:
          "Books the entry's payment on the invoice as POST …/payments books one (outcomes, status, events), dated the entry's " +
          'booking date, and answers with the entry, now `matched`. An entry that is not `unmatched`: 422 entry_not_unmatched.',
        tags,
        params: EntryParams,
        body: BankStatementEntryMatch,
        response: { 200: Envelope(BankStatementEntry) },
      },
    },
    (req, reply) => mutate(deps, req, reply, matchBankStatementEntry(deps, req.auth.organizationId, req.params.entryId, req.body.invoiceId)),
  );
}
