// A task's form as plain functions (web/src/tasks/task-edit.ts): what a save sends, and the rebase after a
// 412.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, type HistoryEntry, type Task } from '../../src/client/index.ts';
import {
  changedFields,
  changedTask,
  clashes,
  draftOf,
  entriesSince,
  etagOf,
  isOverdue,
  NEW_DRAFT,
  newTaskBody,
  rebase,
  refusedField,
} from '../../web/src/tasks/task-edit.ts';

const loaded: Task = {
  id: 7,
  clientId: 2,
  title: 'Call the printer people',
  description: '',
  status: 'open',
  priority: 'normal',
  dueDate: null,
  assigneeId: 3,
  createdAt: '2026-11-01T10:00:00.000Z',
  createdBy: 1,
  updatedAt: '2026-11-01T10:00:00.000Z',
  version: 2,
};

describe('a task form', () => {
  it('sends only the fields the person changed, in the API’s types', () => {
    assert.deepEqual(changedFields(loaded, draftOf(loaded)), {});
    const draft = {
      ...draftOf(loaded),
      status: 'done',
      dueDate: '2027-01-31',
      assigneeId: '',
      clientId: '1',
    };
    assert.deepEqual(changedFields(loaded, draft), {
      status: 'done',
      dueDate: '2027-01-31',
      assigneeId: null,
      clientId: 1,
    });
    assert.deepEqual(
      changedFields({ ...loaded, dueDate: '2027-01-31' }, { ...draftOf(loaded), dueDate: '' }),
      {
        dueDate: null,
      },
    );
  });

  it('creates with the client and title and only the other fields set', () => {
    assert.deepEqual(newTaskBody({ ...NEW_DRAFT, clientId: '3', title: 'T' }), { clientId: 3, title: 'T' });
    assert.deepEqual(
      newTaskBody({ ...NEW_DRAFT, clientId: '3', title: 'T', priority: 'urgent', assigneeId: '2' }),
      {
        clientId: 3,
        title: 'T',
        priority: 'urgent',
        assigneeId: 2,
      },
    );
  });

  it('after a 412, keeps what the person typed and takes the other person’s changes for the rest', () => {
    const typed = { ...draftOf(loaded), status: 'in_progress', description: 'Mine' };
    const current: Task = { ...loaded, priority: 'urgent', description: 'Theirs', version: 3 };
    const rebased = rebase(loaded, typed, current);
    assert.equal(rebased.status, 'in_progress');
    assert.equal(rebased.description, 'Mine');
    assert.equal(rebased.priority, 'urgent', 'their change shown');
    // Saved over their version, only the person's fields go: the priority survives.
    assert.deepEqual(changedFields(current, rebased), { status: 'in_progress', description: 'Mine' });
    assert.deepEqual(clashes(loaded, typed, current), ['description']);
    assert.deepEqual(clashes(loaded, { ...typed, description: 'Theirs' }, current), []);
  });

  it('names the entries since the version loaded, the ETag of a 412’s task, and the refused field', () => {
    const entry = (id: number) => ({ id }) as unknown as HistoryEntry;
    const entries = [entry(9), entry(8), entry(7)];
    assert.deepEqual(
      entriesSince(loaded, { ...loaded, version: 4 }, entries).map((item) => item.id),
      [9, 8],
    );
    assert.equal(etagOf({ ...loaded, version: 12 }), '"v12"');
    const stale = new ApiError({ status: 412, code: 'TASK_CHANGED', message: '', body: { task: loaded } });
    assert.equal(changedTask(stale), loaded);
    assert.equal(
      changedTask(new ApiError({ status: 428, code: 'PRECONDITION_REQUIRED', message: '' })),
      null,
    );
    const refused = new ApiError({
      status: 400,
      code: 'VALIDATION_ERROR',
      message: '',
      body: { errors: [{ path: 'body/dueDate', message: 'is not a date' }] },
    });
    assert.equal(refusedField(refused), 'dueDate');
    assert.equal(
      refusedField(new ApiError({ status: 422, code: 'CLIENT_NOT_FOUND', message: '' })),
      'clientId',
    );
    assert.equal(
      refusedField(new ApiError({ status: 422, code: 'ASSIGNEE_NOT_FOUND', message: '' })),
      'assigneeId',
    );
  });

  it('marks a task overdue only when it is not done and its day has passed', () => {
    assert.equal(isOverdue({ status: 'open', dueDate: '2026-11-27' }, '2026-11-28'), true);
    assert.equal(isOverdue({ status: 'open', dueDate: '2026-11-28' }, '2026-11-28'), false);
    assert.equal(isOverdue({ status: 'done', dueDate: '2020-01-01' }, '2026-11-28'), false);
    assert.equal(isOverdue({ status: 'in_progress', dueDate: null }, '2026-11-28'), false);
  });
});
