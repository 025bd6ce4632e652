/** A worker for bench/scenarios/channel.ts: decodes each transferred frame and acknowledges the count. */
import { parentPort } from 'node:worker_threads';
import { decodeElement } from '../../src/runtime/wire/element-codec.ts';

parentPort!.on('message', (frames: ArrayBuffer[]) => {
  for (const f of frames) decodeElement(new Uint8Array(f), 'worker');
  parentPort!.postMessage(frames.length);
});
parentPort!.postMessage('ready');
