/**
 * What the service says of `token`, asked by a create with an empty body: 400 or 429 (past the
 * bearer check) accept it, 401 refuses it; anything else, an overload 503, says nothing.
 */
export async function tokenVerdict(
  url: string,
  token: string,
): Promise<{ accepted: boolean | undefined; status: number }> {
  const answer = await fetch(`${url}/plants`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
    },
    body: '{}',
  });
  await answer.arrayBuffer();
  const { status } = answer;
  const accepted =
    status === 400 || status === 429
      ? true
      : status === 401
        ? false
        : undefined;
  return { accepted, status };
}
