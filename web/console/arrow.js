// A small reader of Arrow IPC files and streams (what query/ answers): the schema and record
// batches with the types the console shows. Uncompressed bodies only (query/ never compresses);
// dictionaries are refused. Values come out as JS values: numbers (64-bit integers as Number
// when safe, else BigInt), strings, booleans, Float32Array for float32 fixed-size lists, arrays
// for other lists, objects for structs, null for nulls.

const TYPE_NAMES = {
  1: "null", 2: "int", 3: "float", 4: "binary", 5: "utf8", 6: "bool", 7: "decimal", 8: "date",
  9: "time", 10: "timestamp", 11: "interval", 12: "list", 13: "struct", 14: "union",
  15: "fixed_size_binary", 16: "fixed_size_list", 17: "map", 18: "duration",
  19: "large_binary", 20: "large_utf8", 21: "large_list",
};

// Flatbuffer table access over a DataView.
class Table {
  constructor(view, pos) {
    this.v = view;
    this.pos = pos;
    this.vt = pos - view.getInt32(pos, true);
    this.vtSize = view.getUint16(this.vt, true);
  }
  off(field) {
    const o = 4 + 2 * field;
    return o < this.vtSize ? this.v.getUint16(this.vt + o, true) : 0;
  }
  u8(field, d = 0) { const o = this.off(field); return o ? this.v.getUint8(this.pos + o) : d; }
  i16(field, d = 0) { const o = this.off(field); return o ? this.v.getInt16(this.pos + o, true) : d; }
  i32(field, d = 0) { const o = this.off(field); return o ? this.v.getInt32(this.pos + o, true) : d; }
  i64(field, d = 0) { const o = this.off(field); return o ? Number(this.v.getBigInt64(this.pos + o, true)) : d; }
  bool(field, d = false) { return this.u8(field, d ? 1 : 0) !== 0; }
  ref(field) {
    const o = this.off(field);
    if (!o) return 0;
    const at = this.pos + o;
    return at + this.v.getUint32(at, true);
  }
  table(field) { const p = this.ref(field); return p ? new Table(this.v, p) : null; }
  str(field) {
    const p = this.ref(field);
    if (!p) return null;
    const n = this.v.getUint32(p, true);
    return new TextDecoder().decode(new Uint8Array(this.v.buffer, this.v.byteOffset + p + 4, n));
  }
  // Vector: {start, length}.
  vec(field) {
    const p = this.ref(field);
    if (!p) return { start: 0, length: 0 };
    return { start: p + 4, length: this.v.getUint32(p, true) };
  }
  tables(field) {
    const { start, length } = this.vec(field);
    const out = [];
    for (let i = 0; i < length; i++) {
      const at = start + 4 * i;
      out.push(new Table(this.v, at + this.v.getUint32(at, true)));
    }
    return out;
  }
}

function root(view) {
  return new Table(view, view.getUint32(0, true));
}

function readField(t) {
  const typeId = t.u8(2);
  const typeT = t.table(3);
  const type = { id: typeId, name: TYPE_NAMES[typeId] || `type#${typeId}` };
  if (typeId === 2) {
    type.bitWidth = typeT.i32(0);
    type.signed = typeT.bool(1);
  } else if (typeId === 3) {
    type.precision = typeT.i16(0); // 0 half, 1 single, 2 double
  } else if (typeId === 16) {
    type.listSize = typeT.i32(0);
  } else if (typeId === 15) {
    type.byteWidth = typeT.i32(0);
  } else if (typeId === 8) {
    type.unit = typeT.i16(0, 1); // 0 day, 1 millisecond
  } else if (typeId === 10) {
    type.unit = typeT.i16(0); // 0 s, 1 ms, 2 us, 3 ns
    type.timezone = typeT.str(1);
  } else if (typeId === 9) {
    type.unit = typeT.i16(0, 1);
    type.bitWidth = typeT.i32(1, 32);
  } else if (typeId === 18) {
    type.unit = typeT.i16(0, 1);
  } else if (typeId === 7) {
    type.precision = typeT.i32(0);
    type.scale = typeT.i32(1);
    type.bitWidth = typeT.i32(2, 128);
  }
  if (t.table(4)) throw new Error(`column '${t.str(0)}': dictionary-encoded columns are not shown by the console`);
  return {
    name: t.str(0) ?? "",
    nullable: t.bool(1),
    type,
    children: t.tables(5).map(readField),
  };
}

function readSchema(t) {
  return { fields: t.tables(1).map(readField) };
}

// Decodes one column from the batch's nodes and buffers (depth-first, as the IPC format lays
// them out).
class BatchDecoder {
  constructor(view, body, nodes, buffers) {
    this.view = view;
    this.body = body; // byte offset of the body in view
    this.nodes = nodes;
    this.buffers = buffers;
    this.ni = 0;
    this.bi = 0;
  }
  nextBuffer() {
    const b = this.buffers[this.bi++];
    if (!b) throw new Error("Arrow IPC: fewer buffers than the schema needs");
    return { at: this.body + b.offset, length: b.length };
  }
  validity(node, buf) {
    if (node.nulls === 0 || buf.length === 0) return () => true;
    const v = this.view;
    return (i) => ((v.getUint8(buf.at + (i >> 3)) >> (i & 7)) & 1) === 1;
  }
  column(field) {
    const node = this.nodes[this.ni++];
    if (!node) throw new Error("Arrow IPC: fewer field nodes than the schema has fields");
    const v = this.view;
    const t = field.type;
    const n = node.length;
    const out = new Array(n);
    if (t.id === 1) {
      out.fill(null);
      return out;
    }
    const valid = this.validity(node, this.nextBuffer());
    const u8 = (at, len) => new Uint8Array(v.buffer, v.byteOffset + at, len);
    switch (t.id) {
      case 2: case 8: case 9: case 10: case 18: {
        const data = this.nextBuffer();
        const width = t.id === 2 ? t.bitWidth : t.id === 8 ? (t.unit === 0 ? 32 : 64) : t.id === 9 ? t.bitWidth : 64;
        const signed = t.id !== 2 || t.signed;
        for (let i = 0; i < n; i++) {
          if (!valid(i)) { out[i] = null; continue; }
          const at = data.at + (i * width) / 8;
          let x;
          if (width === 8) x = signed ? v.getInt8(at) : v.getUint8(at);
          else if (width === 16) x = signed ? v.getInt16(at, true) : v.getUint16(at, true);
          else if (width === 32) x = signed ? v.getInt32(at, true) : v.getUint32(at, true);
          else {
            const b = signed ? v.getBigInt64(at, true) : v.getBigUint64(at, true);
            x = b <= BigInt(Number.MAX_SAFE_INTEGER) && b >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(b) : b;
          }
          out[i] = x;
        }
        if (t.id === 10 || t.id === 8) {
          // Timestamps and dates as ISO text.
          const toMs = t.id === 8 ? (t.unit === 0 ? 86400000 : 1) : [1000, 1, 1e-3, 1e-6][t.unit];
          for (let i = 0; i < n; i++) {
            if (out[i] !== null) {
              const d = new Date(Number(out[i]) * toMs);
              out[i] = t.id === 8 && t.unit === 0 ? d.toISOString().slice(0, 10) : d.toISOString();
            }
          }
        }
        return out;
      }
      case 3: {
        const data = this.nextBuffer();
        for (let i = 0; i < n; i++) {
          if (!valid(i)) { out[i] = null; continue; }
          if (t.precision === 2) out[i] = v.getFloat64(data.at + 8 * i, true);
          else if (t.precision === 1) out[i] = v.getFloat32(data.at + 4 * i, true);
          else out[i] = halfToFloat(v.getUint16(data.at + 2 * i, true));
        }
        return out;
      }
      case 6: {
        const data = this.nextBuffer();
        for (let i = 0; i < n; i++) {
          out[i] = valid(i) ? ((v.getUint8(data.at + (i >> 3)) >> (i & 7)) & 1) === 1 : null;
        }
        return out;
      }
      case 4: case 5: case 19: case 20: {
        const large = t.id >= 19;
        const offs = this.nextBuffer();
        const data = this.nextBuffer();
        const dec = new TextDecoder();
        const off = (i) => (large ? Number(v.getBigInt64(offs.at + 8 * i, true)) : v.getInt32(offs.at + 4 * i, true));
        for (let i = 0; i < n; i++) {
          if (!valid(i)) { out[i] = null; continue; }
          const s = off(i);
          const bytes = u8(data.at + s, off(i + 1) - s);
          out[i] = t.id === 5 || t.id === 20 ? dec.decode(bytes) : bytes.slice();
        }
        return out;
      }
      case 15: {
        const data = this.nextBuffer();
        for (let i = 0; i < n; i++) out[i] = valid(i) ? u8(data.at + i * t.byteWidth, t.byteWidth).slice() : null;
        return out;
      }
      case 7: {
        const data = this.nextBuffer();
        // Shown as the unscaled 64 low bits with the scale applied (enough for display).
        for (let i = 0; i < n; i++) {
          if (!valid(i)) { out[i] = null; continue; }
          const lo = v.getBigInt64(data.at + (t.bitWidth / 8) * i, true);
          out[i] = Number(lo) / 10 ** t.scale;
        }
        return out;
      }
      case 16: {
        const child = field.children[0];
        const size = t.listSize;
        if (child.type.id === 3 && child.type.precision === 1) {
          // float32 vectors: one Float32Array per row (the child's own validity is ignored:
          // Strata's vectors are null as a whole or fully set).
          const cnode = this.nodes[this.ni++];
          this.nextBuffer();
          const data = this.nextBuffer();
          const all = new Float32Array(cnode.length);
          for (let j = 0; j < cnode.length; j++) all[j] = v.getFloat32(data.at + 4 * j, true);
          for (let i = 0; i < n; i++) out[i] = valid(i) ? all.subarray(i * size, (i + 1) * size) : null;
          return out;
        }
        const values = this.column(child);
        for (let i = 0; i < n; i++) out[i] = valid(i) ? values.slice(i * size, (i + 1) * size) : null;
        return out;
      }
      case 12: case 21: case 17: {
        const large = t.id === 21;
        const offs = this.nextBuffer();
        const off = (i) => (large ? Number(v.getBigInt64(offs.at + 8 * i, true)) : v.getInt32(offs.at + 4 * i, true));
        const values = this.column(field.children[0]);
        for (let i = 0; i < n; i++) out[i] = valid(i) ? values.slice(off(i), off(i + 1)) : null;
        return out;
      }
      case 13: {
        const cols = field.children.map((c) => [c.name, this.column(c)]);
        for (let i = 0; i < n; i++) {
          if (!valid(i)) { out[i] = null; continue; }
          const o = {};
          for (const [name, col] of cols) o[name] = col[i];
          out[i] = o;
        }
        return out;
      }
      default:
        throw new Error(`column '${field.name}': Arrow type ${t.name} is not shown by the console`);
    }
  }
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

/**
 * Reads an Arrow IPC file or stream.
 * @param {ArrayBuffer} buffer
 * @returns {{fields: object[], columns: Map<string, any[]>, rows: object[], numRows: number}}
 */
export function readArrowIpc(buffer) {
  const bytes = new Uint8Array(buffer);
  let pos = 0;
  const magic = new TextDecoder().decode(bytes.subarray(0, 6));
  if (magic === "ARROW1") pos = 8;
  const view = new DataView(buffer);
  let schema = null;
  const batches = [];
  while (pos + 4 <= bytes.length) {
    let len = view.getInt32(pos, true);
    pos += 4;
    if (len === -1) {
      len = view.getInt32(pos, true);
      pos += 4;
    }
    if (len === 0) break; // end of stream
    const meta = new DataView(buffer, pos, len);
    const msg = root(meta);
    const headerType = msg.u8(1);
    const header = msg.table(2);
    const bodyLength = msg.i64(3);
    const bodyAt = pos + len;
    if (headerType === 1) {
      schema = readSchema(header);
    } else if (headerType === 2) {
      throw new Error("Arrow IPC: dictionary batches are not shown by the console");
    } else if (headerType === 3) {
      if (!schema) throw new Error("Arrow IPC: record batch before the schema");
      if (header.table(3)) throw new Error("Arrow IPC: compressed record batches are not shown by the console");
      // Field nodes and buffer descriptors are structs in the metadata; buffers are read from
      // the body (offsets relative to its start).
      const nodes = [];
      const buffers = [];
      const nv = header.vec(1);
      const bv = header.vec(2);
      for (let i = 0; i < nv.length; i++) {
        const at = nv.start + 16 * i;
        nodes.push({ length: Number(meta.getBigInt64(at, true)), nulls: Number(meta.getBigInt64(at + 8, true)) });
      }
      for (let i = 0; i < bv.length; i++) {
        const at = bv.start + 16 * i;
        buffers.push({ offset: Number(meta.getBigInt64(at, true)), length: Number(meta.getBigInt64(at + 8, true)) });
      }
      const dec = new BatchDecoder(new DataView(buffer), bodyAt, nodes, buffers);
      batches.push({ length: header.i64(0), columns: schema.fields.map((f) => dec.column(f)) });
    }
    pos = bodyAt + bodyLength;
  }
  if (!schema) throw new Error("Arrow IPC: no schema message");
  const columns = new Map();
  schema.fields.forEach((f, c) => columns.set(f.name, batches.flatMap((b) => b.columns[c])));
  const numRows = batches.reduce((s, b) => s + b.length, 0);
  const rows = [];
  for (let i = 0; i < numRows; i++) {
    const r = {};
    for (const [name, col] of columns) r[name] = col[i];
    rows.push(r);
  }
  return { fields: schema.fields, columns, rows, numRows };
}
