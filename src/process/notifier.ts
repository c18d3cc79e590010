/**
 * Wakes whoever waits for "something changed" (a run reached a checkpoint, work was refused,
 * the deadline passed). `wait()` returns a promise that the next `notify()` resolves.
 */
export class Notifier {
  private waiters: (() => void)[] = [];

  wait(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }
}
