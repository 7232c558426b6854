// Passwords the service makes: temporary ones an admin hands over, and the command line's generated ones.
import { randomInt } from 'node:crypto';

/** No 0/O, 1/l/I: a password read aloud or copied by hand comes out as it was made. */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const GROUPS = 5;
const GROUP_LENGTH = 5;

/**
 * A random password from the CSPRNG: 25 characters of a 31-letter alphabet (about 124 bits) in five
 * groups of five joined by `-` (29 characters in all), so a person can read it out or type it.
 */
export function generatePassword(): string {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    let group = '';
    for (let i = 0; i < GROUP_LENGTH; i++) group += ALPHABET[randomInt(ALPHABET.length)];
    groups.push(group);
  }
  return groups.join('-');
}
