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

/** Failed authentications per client address and window, per replica on purpose (docs/tokens.md#rate-limits). */
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
