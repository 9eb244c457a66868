import { Injectable } from '@nestjs/common';
import { AuthSettings } from './auth-module.options.js';

export interface FailureVerdict {
  blocked: boolean;
  retryAfterSeconds: number;
}

interface FailureWindow {
  failures: number;
  endsAt: number;
}

/** The address failures are counted by: the socket's peer (no `trust proxy` is set). */
export function clientAddress(request: { ip?: string }): string {
  return request.ip ?? 'unknown';
}

// Rotating addresses (an IPv6 /64 holds billions) must not grow memory without bound.
const MAX_ADDRESSES = 100_000;

/**
 * Counts failed authentications per client address: authFailureLimit per
 * authFailureWindowMs (AUTH_FAILURE_LIMIT, AUTH_FAILURE_WINDOW_MS), the window starting at the address's first failure. Only failures
 * count: a client with a valid token is never held back by someone else guessing from the
 * same address. Synchronous and in this process's memory, because the guard asks it before
 * every token look-up (docs/tokens.md, "Rate limits": per replica, on purpose).
 */
@Injectable()
export class AuthFailureLimiter {
  // Insertion order is window order (every window has the same length): oldest first.
  private readonly windows = new Map<string, FailureWindow>();

  constructor(private readonly settings: AuthSettings) {}

  /** True when the address has used up its failures for the current window. */
  isOverLimit(clientAddress: string): boolean {
    const window = this.liveWindow(clientAddress);
    return (
      window !== undefined && window.failures >= this.settings.authFailureLimit
    );
  }

  recordFailure(clientAddress: string): FailureVerdict {
    const now = Date.now();
    const window =
      this.liveWindow(clientAddress) ?? this.openWindow(clientAddress, now);
    window.failures += 1;
    return {
      blocked: window.failures > this.settings.authFailureLimit,
      retryAfterSeconds: Math.max(1, Math.ceil((window.endsAt - now) / 1000)),
    };
  }

  private liveWindow(clientAddress: string): FailureWindow | undefined {
    const window = this.windows.get(clientAddress);
    return window !== undefined && window.endsAt > Date.now()
      ? window
      : undefined;
  }

  private openWindow(clientAddress: string, now: number): FailureWindow {
    this.windows.delete(clientAddress);
    for (const [address, window] of this.windows) {
      if (window.endsAt > now && this.windows.size < MAX_ADDRESSES) break;
      this.windows.delete(address);
    }
    const window = {
      failures: 0,
      endsAt: now + this.settings.authFailureWindowMs,
    };
    this.windows.set(clientAddress, window);
    return window;
  }
}
