/**
 * What the service at `url` says of `token`, asked without writing: a create with an empty
 * body. Past authentication it is refused for its body (400) or its token's rate (429):
 * accepted. At authentication, 401: refused. Anything else (an overload 503, answered in
 * front of the guards) says nothing of the token: `accepted` undefined.
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
