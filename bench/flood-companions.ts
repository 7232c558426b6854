// The companions npm run bench:flood runs beside its owners during the outside flood: one file each, listed here.
import type { FloodCompanion } from './flood.ts';
import { passkeyCompanion } from './flood-passkey.ts';

export const FLOOD_COMPANIONS: readonly FloodCompanion[] = [passkeyCompanion];
