// Tasks in and out as CSV (docs/rules.md#export-and-import): the export streams, the import is all or
// nothing.
import { IMPORT_BODY_LIMIT_BYTES, IMPORT_MAX_ROWS } from '../../limits.ts';
import { CSV_COLUMNS, exportStream } from '../../tasks/task-csv.ts';
import { searchOf, type TaskListQuery, taskSearchQuerySchema } from '../../tasks/task-search.ts';
import { storingAnswer } from '../plugins/idempotency.ts';
import { errorResponses } from '../schemas.ts';
import type { RoutesPlugin } from '../services.ts';

const CSV_TYPE = 'text/csv; charset=utf-8';

/** The list's parameters but its cursor: an export is every page. */
const { cursor: _cursor, ...exportQuerySchema } = taskSearchQuerySchema;

export const taskTransferRoutes: RoutesPlugin = async (app, { services }) => {
  const { tasks, taskImporter, clock } = services;

  app.get<{ Querystring: TaskListQuery }>('/api/employee/tasks/export', {
    config: { access: 'user' },
    schema: {
      tags: ['tasks'],
      summary: 'Every task the list would show for these filters and sort, as one CSV file',
      querystring: { type: 'object', additionalProperties: false, properties: exportQuerySchema },
      response: {
        200: {
          description: `RFC 4180 with a header row: ${CSV_COLUMNS.join(', ')} (client by name, assignee by email). A cell that begins with = + - @ tab or CR gets a leading '.`,
          headers: {
            'Content-Disposition': {
              type: 'string',
              description: 'attachment; filename="tasks-YYYY-MM-DD.csv"',
              required: true,
            },
          },
          content: { 'text/csv': { schema: { type: 'string' } } },
        },
      },
    },
    handler: async (request, reply) => {
      const search = searchOf(request.query);
      const day = new Date(clock.now()).toISOString().slice(0, 10);
      return reply
        .type(CSV_TYPE)
        .header('content-disposition', `attachment; filename="tasks-${day}.csv"`)
        .send(exportStream((s, after, limit) => tasks.search(s, after, limit), search));
    },
  });

  // The one route whose body is CSV and may reach 20 MiB; every other body stays JSON under 64 KiB.
  app.addContentTypeParser(
    'text/csv',
    { parseAs: 'string', bodyLimit: IMPORT_BODY_LIMIT_BYTES },
    (_request, body, done) => done(null, body),
  );

  app.post<{ Body: string }>('/api/employee/tasks/import', {
    bodyLimit: IMPORT_BODY_LIMIT_BYTES,
    config: {
      access: 'user',
      // A retried import creates its tasks once; the replay is the first answer, a 201.
      idempotencyKey: { status: 201 },
    },
    schema: {
      tags: ['tasks'],
      summary: `Create up to ${IMPORT_MAX_ROWS.toLocaleString('en')} tasks from a CSV file, all or none`,
      consumes: ['text/csv'],
      body: {
        type: 'string',
        description: `CSV with a header row naming its columns, in any order: client and title, and any of ${CSV_COLUMNS.join(', ')} (id is ignored). At most ${IMPORT_BODY_LIMIT_BYTES / 1024 / 1024} MiB.`,
      },
      response: {
        201: {
          type: 'object',
          required: ['created'],
          additionalProperties: false,
          properties: { created: { type: 'integer', minimum: 0 } },
        },
        ...errorResponses('IMPORT_INVALID', 'PAYLOAD_TOO_LARGE'),
      },
    },
    handler: async (request, reply) => {
      const answer = (created: number) => ({ created });
      const created = await taskImporter.import(
        request.user!.id,
        request.body,
        storingAnswer(request, answer),
      );
      return reply.code(201).send({ created });
    },
  });
};
