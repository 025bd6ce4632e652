import { describe, expect, it } from 'vitest';
import { MIN_WATERMARK } from '../../../src/core/watermark.ts';
import { WatermarkValve } from '../../../src/runtime/time/watermark-valve.ts';

describe('watermark valve: the input watermark of a subtask', () => {
  it('is the minimum over the channels and only ever increases', () => {
    const v = new WatermarkValve(3);
    expect(v.inputWatermark(0, 10)).toEqual({ watermarkMs: null, idle: null });
    expect(v.inputWatermark(1, 5)).toEqual({ watermarkMs: null, idle: null });
    expect(v.watermarkMs).toBe(MIN_WATERMARK); // channel 2 has said nothing yet
    expect(v.inputWatermark(2, 7).watermarkMs).toBe(5);
    expect(v.inputWatermark(1, 20).watermarkMs).toBe(7);
    // A channel's lower watermark than it sent before changes nothing.
    expect(v.inputWatermark(2, 1).watermarkMs).toBeNull();
    expect(v.inputWatermark(2, 30).watermarkMs).toBe(10);
    expect(v.watermarkMs).toBe(10);
  });

  it('an idle channel stops holding the watermark back; all idle: no advance, and the idleness goes downstream', () => {
    const v = new WatermarkValve(2);
    v.inputWatermark(0, 100);
    v.inputWatermark(1, 3);
    expect(v.watermarkMs).toBe(3);
    expect(v.inputStatus(1, true)).toEqual({ watermarkMs: 100, idle: null });
    expect(v.inputWatermark(0, 150).watermarkMs).toBe(150);
    expect(v.inputStatus(0, true)).toEqual({ watermarkMs: null, idle: true });
    expect(v.isIdle).toBe(true);
    expect(v.watermarkMs).toBe(150);
    // The first channel to come back makes the subtask active again.
    expect(v.inputStatus(0, false)).toEqual({ watermarkMs: null, idle: false });
    expect(v.inputWatermark(0, 160).watermarkMs).toBe(160);
  });

  it('a rejoining channel whose watermark is behind never moves the combined one backwards; it counts again once caught up', () => {
    const v = new WatermarkValve(2);
    v.inputWatermark(0, 10);
    v.inputWatermark(1, 10);
    v.inputStatus(1, true);
    expect(v.inputWatermark(0, 50).watermarkMs).toBe(50);
    // Channel 1 rejoins with watermark 20 (< 50): a watermark is activity, but not a step back.
    expect(v.inputWatermark(1, 20)).toEqual({ watermarkMs: null, idle: null });
    expect(v.watermarkMs).toBe(50);
    // While it is behind, channel 0 alone drives the watermark.
    expect(v.inputWatermark(0, 60).watermarkMs).toBe(60);
    expect(v.inputWatermark(1, 55).watermarkMs).toBeNull();
    // Caught up (>= 60): it counts in the minimum again and now holds channel 0 back.
    expect(v.inputWatermark(1, 65).watermarkMs).toBeNull();
    expect(v.inputWatermark(0, 90).watermarkMs).toBe(65);
    expect(v.inputWatermark(1, 80).watermarkMs).toBe(80);
  });

  it('a channel that rejoins through a status message, behind, waits until its watermark catches up', () => {
    const v = new WatermarkValve(2);
    v.inputWatermark(0, 5);
    v.inputWatermark(1, 5);
    v.inputStatus(0, true);
    v.inputWatermark(1, 40);
    expect(v.watermarkMs).toBe(40);
    expect(v.inputStatus(0, false)).toEqual({ watermarkMs: null, idle: null });
    expect(v.inputWatermark(1, 45).watermarkMs).toBe(45);
    expect(v.inputWatermark(0, 44).watermarkMs).toBeNull();
    expect(v.inputWatermark(0, 50).watermarkMs).toBeNull(); // caught up: min(50, 45) = 45, no advance
    expect(v.inputWatermark(1, 70).watermarkMs).toBe(50);
  });

  it('every channel idle but one that is behind: nothing advances until it caught up', () => {
    const v = new WatermarkValve(2);
    v.inputWatermark(0, 30);
    v.inputWatermark(1, 30);
    v.inputStatus(0, true);
    v.inputStatus(1, true);
    expect(v.inputWatermark(1, 10)).toEqual({ watermarkMs: null, idle: false });
    expect(v.inputWatermark(1, 31)).toEqual({ watermarkMs: 31, idle: null });
  });
});
