/**
 * A worker for bench/scenarios/channel.ts: decodes each transferred frame and acknowledges the
 * count. For the hop latency: echoes a number posted to it, and, given a SharedArrayBuffer, answers
 * each sequence number stored in its slot 0 by storing it in slot 1 (Atomics.waitAsync/notify).
 */
import { parentPort } from 'node:worker_threads';
import { decodeElement } from '../../src/runtime/network/element-codec.ts';
import { waitAsync } from './wait-async.ts';

function answerShared(slots: Int32Array): void {
  let seen = 0;
  const wait = (): void => {
    const r = waitAsync(slots, 0, seen);
    const next = (): void => {
      seen = Atomics.load(slots, 0);
      if (seen < 0) return; // done
      Atomics.store(slots, 1, seen);
      Atomics.notify(slots, 1);
      wait();
    };
    if (r.async) void r.value.then(next);
    else next();
  };
  wait();
}

parentPort!.on('message', (message: ArrayBuffer[] | number | SharedArrayBuffer) => {
  if (typeof message === 'number') parentPort!.postMessage(message);
  else if (message instanceof SharedArrayBuffer) answerShared(new Int32Array(message));
  else {
    for (const f of message) decodeElement(new Uint8Array(f), 'worker');
    parentPort!.postMessage(message.length);
  }
});
parentPort!.postMessage('ready');
