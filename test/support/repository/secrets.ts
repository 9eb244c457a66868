// What no deployment file may carry: a secret. A file that needs one takes it from the
// caller's environment or from a Secret, and these tell a literal one when they see it.

/**
 * A run of 16+ token characters mixing letters and digits, as generated tokens have.
 * `/`, `.` and `:` end a run, so paths, host names and ports do not count.
 */
export function looksLikeSecret(value: string): boolean {
  return (value.match(/[A-Za-z0-9+=_-]{16,}/g) ?? []).some(
    (run) => /[0-9]/.test(run) && /[A-Za-z]/.test(run),
  );
}

/** A postgres URL's password, or undefined when it has none. */
export function urlPassword(value: string): string | undefined {
  const match = /^postgres(?:ql)?:\/\/[^:@/]*:([^@]*)@/.exec(value);
  return match?.[1];
}

export function isSecretName(name: string): boolean {
  return /TOKEN|PASSWORD|PASSWD|SECRET|PRIVATE|CREDENTIAL|API_KEY/i.test(name);
}
