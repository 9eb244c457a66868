export const TEST_TOKENS = [
  'e2e-token-alpha-0123456789',
  'e2e-token-beta-0123456789',
] as const;
export const TOKEN = TEST_TOKENS[0];
export const OTHER_TOKEN = TEST_TOKENS[1];
