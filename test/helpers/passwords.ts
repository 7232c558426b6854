// Passwords the account tests choose: one the screening refuses as common, one it accepts.

/** On the shipped list of common passwords, and 12 characters long: refused as `common`. */
export const COMMON_PASSWORD = 'password1234';
/** Long, and on no list. */
export const NEW_PASSWORD = 'violet tram orbit 92';
