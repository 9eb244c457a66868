// Every test makes at least one assertion (expect): a test that only runs code, or only waits
// with `eventually`, passes whatever the code does. Run before each test of every project
// (vitest.config.ts, stryker.vitest.config.ts); docs/testing.md#every-test-asserts.
beforeEach(() => {
  expect.hasAssertions();
});
