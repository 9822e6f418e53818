// Workload 1 of `make bench-compare`: ingest rows/s with batches of 1, 100 and 1,000 Fashion-MNIST
// training rows, and the time until the rows are searchable through a vector index.
//
// Each system at its documented best practice:
// - Strata: the table is created empty and its vector index is created BEFORE any row
//   (README "Indexes": every MemTable maintains an HNSW graph while rows are written), so the
//   rows are searchable through the index once each write is acknowledged. Index parameters:
//   Index.hnswSq({m: 16, efConstruction: 100}), Strata's own defaults and the hnswlib reference
//   run's parameters. `waitForIndex` is still called and timed (index_seconds; expected ~0).
// - LanceDB OSS: batched `add`, then `createIndex` + `waitForIndex` (LanceDB docs: "build the
//   index after loading the data"; an empty table cannot be indexed: "Creating empty vector
//   indices with train=False is not yet implemented"). IVF_HNSW_SQ = Index.hnswSq() with the
//   client's defaults; IVF_PQ = Index.ivfPq() with defaults. With 1,000-row batches each index
//   type gets its own table, each written in full and timed (fm_b1000 -> IVF_HNSW_SQ,
//   fm_b1000_pq -> IVF_PQ); batches 1 and 100 get IVF_HNSW_SQ only.
//
// Batch 1 writes a subset (`opts.singleRows`, default 2,000; --quick 200) since 60,000 single-row
// writes would take minutes; batches 100 and 1,000 write all `opts.train` rows.
// Leaves open for the later workloads: ctx.state.strata / ctx.state.lance (the systems) and
// ctx.state.tables = {strata: {hnsw: "fm_b1000"}, lancedb: {hnsw: "fm_b1000", pq: "fm_b1000_pq"}}.
import { fashionSchema, fashionBatch } from "../../scripts/lib/datasets.mjs";

/** Index parameters of each system's vector index (also reported in results.json params). */
export function strataIndex(lancedb) {
  return lancedb.Index.hnswSq({ m: 16, efConstruction: 100 });
}

export async function writeRows(table, arrow, schema, split, rows, batch, log, label) {
  const t0 = performance.now();
  let lastLog = t0;
  for (let start = 0; start < rows; start += batch) {
    const end = Math.min(rows, start + batch);
    await table.add(fashionBatch(arrow, schema, split, start, end));
    const now = performance.now();
    if (now - lastLog > 10000) {
      log(`  ${label}: ${end}/${rows} rows, ${((end / (now - t0)) * 1000).toFixed(0)} rows/s`);
      lastLog = now;
    }
  }
  return (performance.now() - t0) / 1000;
}

async function buildIndex(table, lancedb, config) {
  const t0 = performance.now();
  await table.createIndex("vector", { config, replace: true });
  await table.waitForIndex(["vector_idx"], 3600);
  return (performance.now() - t0) / 1000;
}

function entry(system, index, batch, rows, writeS, indexS) {
  const searchable = writeS + indexS;
  return {
    system,
    index,
    batch,
    rows,
    write_seconds: writeS,
    index_seconds: indexS,
    searchable_seconds: searchable,
    rows_per_s: rows / writeS,
    searchable_rows_per_s: rows / searchable,
  };
}

/** Runs the ingest workload; returns the `ingest` array of results.json. */
export async function run(ctx) {
  const { lancedb, arrow, fashion, opts, log } = ctx;
  const train = fashion.train;
  const full = Math.min(opts.train, train.n);
  const single = Math.min(full, opts.singleRows ?? (opts.quick ? 200 : 2000));
  const batches = [1, 100, 1000];
  const schema = fashionSchema(arrow);
  const out = [];
  ctx.state.strata ??= await ctx.openStrata("strata");
  ctx.state.lance ??= await ctx.openLance("lancedb");
  const strata = ctx.state.strata;
  const lance = ctx.state.lance;

  for (const batch of batches) {
    const rows = batch === 1 ? single : full;
    const name = `fm_b${batch}`;

    // Strata: empty table, index first, then the writes.
    log(`ingest strata batch=${batch} rows=${rows}`);
    const st = await strata.db.createEmptyTable(name, schema);
    await st.createIndex("vector", { config: strataIndex(lancedb) });
    const sw = await writeRows(st, arrow, schema, train, rows, batch, log, `strata b${batch}`);
    const t0 = performance.now();
    await st.waitForIndex(["vector_idx"], 3600);
    const si = (performance.now() - t0) / 1000;
    const sCount = await st.countRows();
    if (sCount !== rows) throw new Error(`strata ${name}: ${sCount} rows after writing ${rows}`);
    out.push(entry("strata", "HNSW (maintained)", batch, rows, sw, si));
    log(`  strata b${batch}: ${(rows / sw).toFixed(0)} rows/s, searchable after ${(sw + si).toFixed(2)} s`);

    // LanceDB: batched add, then the index.
    log(`ingest lancedb batch=${batch} rows=${rows}`);
    const lt = await lance.db.createEmptyTable(name, schema);
    const lw = await writeRows(lt, arrow, schema, train, rows, batch, log, `lancedb b${batch}`);
    const lCount = await lt.countRows();
    if (lCount !== rows) throw new Error(`lancedb ${name}: ${lCount} rows after writing ${rows}`);
    const li = await buildIndex(lt, lancedb, lancedb.Index.hnswSq());
    out.push(entry("lancedb", "IVF_HNSW_SQ", batch, rows, lw, li));
    log(`  lancedb b${batch}: ${(rows / lw).toFixed(0)} rows/s, IVF_HNSW_SQ ${li.toFixed(2)} s`);

    if (batch === 1000) {
      const pqName = `${name}_pq`;
      log(`ingest lancedb batch=${batch} rows=${rows} (IVF_PQ table ${pqName})`);
      const pt = await lance.db.createEmptyTable(pqName, schema);
      const pw = await writeRows(pt, arrow, schema, train, rows, batch, log, `lancedb b${batch} pq`);
      const pi = await buildIndex(pt, lancedb, lancedb.Index.ivfPq());
      out.push(entry("lancedb", "IVF_PQ", batch, rows, pw, pi));
      log(`  lancedb b${batch}: ${(rows / pw).toFixed(0)} rows/s, IVF_PQ ${pi.toFixed(2)} s`);
    } else {
      // The smaller tables are not used later; free their memory and disk.
      await strata.db.dropTable(name);
      await lance.db.dropTable(name);
    }
  }
  ctx.state.tables = { strata: { hnsw: "fm_b1000" }, lancedb: { hnsw: "fm_b1000", pq: "fm_b1000_pq" } };
  return out;
}

/**
 * The indexed full tables the later workloads use, without measuring: runs nothing when the
 * ingest workload already ran (ctx.state.tables), else loads fm_b1000 (both systems, index as
 * in run()) and fm_b1000_pq (LanceDB, IVF_PQ) with 1,000-row batches.
 */
export async function ensureIndexed(ctx) {
  if (ctx.state.tables) return ctx.state.tables;
  const { lancedb, arrow, fashion, opts, log } = ctx;
  const rows = Math.min(opts.train, fashion.train.n);
  const schema = fashionSchema(arrow);
  ctx.state.strata ??= await ctx.openStrata("strata");
  ctx.state.lance ??= await ctx.openLance("lancedb");
  log(`loading the indexed tables (${rows} rows each; ingest workload not selected)`);
  const st = await ctx.state.strata.db.createEmptyTable("fm_b1000", schema);
  await st.createIndex("vector", { config: strataIndex(lancedb) });
  await writeRows(st, arrow, schema, fashion.train, rows, 1000, log, "strata");
  await st.waitForIndex(["vector_idx"], 3600);
  const lt = await ctx.state.lance.db.createEmptyTable("fm_b1000", schema);
  await writeRows(lt, arrow, schema, fashion.train, rows, 1000, log, "lancedb");
  await buildIndex(lt, lancedb, lancedb.Index.hnswSq());
  const pt = await ctx.state.lance.db.createEmptyTable("fm_b1000_pq", schema);
  await writeRows(pt, arrow, schema, fashion.train, rows, 1000, log, "lancedb pq");
  await buildIndex(pt, lancedb, lancedb.Index.ivfPq());
  ctx.state.tables = { strata: { hnsw: "fm_b1000" }, lancedb: { hnsw: "fm_b1000", pq: "fm_b1000_pq" } };
  return ctx.state.tables;
}
