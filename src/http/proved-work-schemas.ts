// The schemas of proved work at login (docs/rules.md#proved-work): a body's solution, LOGIN_BUSY's challenge.
import { WORK_BITS_MAX, WORK_NONCE_MAX_LENGTH } from '../login/proved-work.ts';

/** `work` in the login body: a challenge from an earlier LOGIN_BUSY and the nonce that solves it. */
export const workSolutionSchema = {
  type: 'object',
  description:
    'A solved challenge of an earlier LOGIN_BUSY: SHA-256 of `challenge:nonce` starts with zero bits. A wrong, expired, reused or foreign one counts as no work.',
  required: ['challenge', 'nonce'],
  additionalProperties: false,
  properties: {
    challenge: { type: 'string', minLength: 1, maxLength: 128 },
    nonce: { type: 'string', minLength: 1, maxLength: WORK_NONCE_MAX_LENGTH },
  },
} as const;

/** `work` in a LOGIN_BUSY body (openapi-answers.ts' details of the code): present while the shared lane sheds. */
export const workAskedSchema = {
  type: 'object',
  description:
    'Proved work (docs/rules.md#proved-work): a nonce such that SHA-256 of `challenge + ":" + nonce` starts with at least `bits` zero bits, sent back as the login body\'s `work`, puts the attempt ahead of those that proved less. Valid 2 minutes, once, for the same email.',
  required: ['challenge', 'bits'],
  additionalProperties: false,
  properties: {
    challenge: { type: 'string' },
    bits: { type: 'integer', minimum: 1, maximum: WORK_BITS_MAX },
  },
} as const;
