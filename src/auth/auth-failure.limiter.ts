import { Inject, Injectable } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { type Environment, InjectEnvironment } from '../config/environment.js';

export interface FailureVerdict {
  blocked: boolean;
  retryAfterSeconds: number;
}

/**
 * Counts failed authentications per client address (AUTH_FAILURE_LIMIT per
 * AUTH_FAILURE_WINDOW_MS). Only failures count: a client with a valid token is never
 * held back by someone else guessing from the same address.
 */
@Injectable()
export class AuthFailureLimiter {
  constructor(
    @Inject(ThrottlerStorage) private readonly storage: ThrottlerStorage,
    @InjectEnvironment() private readonly env: Environment,
  ) {}

  async recordFailure(clientAddress: string): Promise<FailureVerdict> {
    const record = await this.storage.increment(
      `auth-failure:${clientAddress}`,
      this.env.AUTH_FAILURE_WINDOW_MS,
      this.env.AUTH_FAILURE_LIMIT,
      this.env.AUTH_FAILURE_WINDOW_MS,
      'auth-failures',
    );
    return {
      blocked: record.isBlocked,
      retryAfterSeconds: Math.max(1, record.timeToBlockExpire),
    };
  }
}
