// Arrow IPC stream request bodies for raw-HTTP e2e tests (insert/, create/, merge_insert/),
// built column-wise with apache-arrow so large bodies are cheap to make.
import * as arrow from "apache-arrow";
import { rng } from "./vectors.mjs";

/** Schema {id: int64 not null, vector: fixed_size_list<float32 nullable>[dim] nullable}. */
export function vectorSchema(dim) {
  const item = new arrow.Field("item", new arrow.Float32(), true);
  return new arrow.Schema([
    new arrow.Field("id", new arrow.Int64(), false),
    new arrow.Field("vector", new arrow.FixedSizeList(dim, item), true),
  ]);
}

/**
 * An Arrow IPC stream (Uint8Array) of one batch of `n` rows of vectorSchema(dim): ids
 * id0..id0+n-1, vector values uniform in [-1, 1) from a PRNG seeded with `seed`.
 */
export function vectorStream(id0, n, dim, seed = 1) {
  const rand = rng(seed);
  const ids = new BigInt64Array(n);
  const values = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) ids[i] = BigInt(id0 + i);
  for (let i = 0; i < values.length; i++) values[i] = rand() * 2 - 1;
  const schema = vectorSchema(dim);
  const idData = arrow.makeData({ type: new arrow.Int64(), length: n, data: ids });
  const child = arrow.makeData({ type: new arrow.Float32(), length: n * dim, data: values });
  const vecData = arrow.makeData({ type: schema.fields[1].type, length: n, nullCount: 0, child });
  const struct = arrow.makeData({
    type: new arrow.Struct(schema.fields),
    length: n,
    children: [idData, vecData],
  });
  return arrow.tableToIPC(new arrow.Table([new arrow.RecordBatch(schema, struct)]), "stream");
}
