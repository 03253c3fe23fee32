// The web client's PNG icons (192 and 512 pixels), drawn at build time from the
// same shapes as web/client/icon.svg, so no binary image is kept in the
// repository: a rounded square, two chevrons and a dot, 4× supersampled.
import { deflateSync } from "node:zlib";

const BACKGROUND = [0x09, 0x69, 0xda];
const FOREGROUND = [0xff, 0xff, 0xff];
// In the SVG's 512-unit box.
const RADIUS = 96;
const STROKE = 20;
const SEGMENTS = [
  [176, 176, 96, 256], [96, 256, 176, 336],
  [336, 176, 416, 256], [416, 256, 336, 336],
];
const DOT = { x: 256, y: 256, r: 28 };

function insideRoundedSquare(x, y) {
  const cx = Math.min(Math.max(x, RADIUS), 512 - RADIUS);
  const cy = Math.min(Math.max(y, RADIUS), 512 - RADIUS);
  return x >= 0 && y >= 0 && x <= 512 && y <= 512 && (x - cx) ** 2 + (y - cy) ** 2 <= RADIUS ** 2;
}

function nearSegment(x, y, [ax, ay, bx, by]) {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)));
  return (x - ax - t * dx) ** 2 + (y - ay - t * dy) ** 2 <= STROKE ** 2;
}

function inForeground(x, y) {
  return (x - DOT.x) ** 2 + (y - DOT.y) ** 2 <= DOT.r ** 2 || SEGMENTS.some((s) => nearSegment(x, y, s));
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buffer) {
  let c = 0xffffffff;
  for (const byte of buffer) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "ascii");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** An RGBA PNG of the icon, `size` pixels square. */
export function iconPng(size) {
  const SAMPLES = 4;
  const scale = 512 / size;
  const rows = Buffer.alloc(size * (size * 4 + 1));
  for (let py = 0; py < size; py++) {
    const row = py * (size * 4 + 1);
    rows[row] = 0; // filter: none
    for (let px = 0; px < size; px++) {
      let cover = 0;
      let ink = 0;
      for (let sy = 0; sy < SAMPLES; sy++) {
        for (let sx = 0; sx < SAMPLES; sx++) {
          const x = (px + (sx + 0.5) / SAMPLES) * scale;
          const y = (py + (sy + 0.5) / SAMPLES) * scale;
          if (!insideRoundedSquare(x, y)) continue;
          cover++;
          if (inForeground(x, y)) ink++;
        }
      }
      const i = row + 1 + px * 4;
      const f = cover === 0 ? 0 : ink / cover;
      for (let c = 0; c < 3; c++) rows[i + c] = Math.round(BACKGROUND[c] * (1 - f) + FOREGROUND[c] * f);
      rows[i + 3] = Math.round((cover / (SAMPLES * SAMPLES)) * 255);
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows, { level: 9 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}
