#include "sstable/sstable_writer.h"

#include "sstable/index_files.h"

#include <spdlog/spdlog.h>

#include <limits>

#include "arrow/compute/concatenate.h"
#include "format/bloom_filter.h"
#include "format/deletion_vector.h"
#include "format/ids.h"
#include "format/key_encoding.h"
#include "io/fetched_file.h"
#include "io/local_object_store.h"
#include "sstable/pk_index.h"

namespace strata::sstable {
namespace {

constexpr char kGenInfix[] = "_gen_";
/// Rows per record batch in data.arrow: many small MemTable batches (1-row puts) are
/// concatenated into batches of about this many rows.
constexpr int64_t kTargetBatchRows = 65536;

/// `batches` (non-empty ones) regrouped into runs of about kTargetBatchRows rows, order kept.
std::vector<arrow::RecordBatchPtr> Coalesce(const std::vector<arrow::RecordBatchPtr>& batches) {
  std::vector<arrow::RecordBatchPtr> out;
  std::vector<arrow::RecordBatchPtr> run;
  int64_t run_rows = 0;
  auto flush_run = [&] {
    if (run.empty()) return;
    if (run.size() == 1) {
      out.push_back(run[0]);
    } else {
      auto merged = arrow::compute::ConcatenateBatches(run);
      if (merged.ok()) {
        out.push_back(*merged);
      } else {  // e.g. utf8 offsets past int32: keep the pieces
        out.insert(out.end(), run.begin(), run.end());
      }
    }
    run.clear();
    run_rows = 0;
  };
  for (const auto& b : batches) {
    if (b->num_rows() == 0) continue;
    if (run_rows > 0 && run_rows + b->num_rows() > kTargetBatchRows) flush_run();
    run.push_back(b);
    run_rows += b->num_rows();
  }
  flush_run();
  return out;
}

}  // namespace

std::string NewSSTableDirName(uint64_t generation) {
  return format::RandomHex(8) + kGenInfix + std::to_string(generation);
}

Result<uint64_t> ParseSSTableDirName(const std::string& dir_name) {
  auto bad = [&] {
    return Status::Invalid("SSTable directory name '" + dir_name +
                           "' is not {8 hex digits}_gen_{generation}");
  };
  if (dir_name.size() < 8 + 5 + 1 || dir_name.compare(8, 5, kGenInfix) != 0) return bad();
  for (int i = 0; i < 8; ++i) {
    char c = dir_name[static_cast<size_t>(i)];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return bad();
  }
  std::string digits = dir_name.substr(13);
  if (digits.size() > 19 || (digits.size() > 1 && digits[0] == '0')) return bad();
  uint64_t g = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return bad();
    g = g * 10 + static_cast<uint64_t>(c - '0');
  }
  if (g == 0) return bad();
  return g;
}

std::string SSTableFileKey(const std::string& shard_prefix, const std::string& dir_name,
                           const std::string& file) {
  return shard_prefix + "/" + dir_name + "/" + file;
}

Status RemoveSSTable(io::ObjectStore& store, const std::string& shard_prefix,
                     const std::string& dir_name) {
  Status first = RemoveIndexFiles(store, shard_prefix, dir_name);
  for (const char* f :
       {kSupersedesFile, kBloomFilterFile, kPkIndexFile, kDeletionsFile, kDataFile}) {
    Status st = store.Remove(SSTableFileKey(shard_prefix, dir_name, f));
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

Result<format::SSTableEntry> WriteSSTable(io::ObjectStore& store, const std::string& shard_prefix,
                                          const SSTableInput& input,
                                          const SSTableWriteOptions& options) {
  if (input.generation == 0) return Status::Invalid("SSTable generation must be >= 1, got 0");
  if (input.schema == nullptr) return Status::Invalid("SSTable input has no schema");
  STRATA_ASSIGN_OR_RETURN(format::KeyEncoder encoder,
                          format::KeyEncoder::Make(*input.schema, input.key_columns));
  int64_t total_rows = 0;
  for (size_t i = 0; i < input.batches.size(); ++i) {
    const auto& b = input.batches[i];
    if (b == nullptr || !b->schema()->Equals(*input.schema)) {
      return Status::Invalid("SSTable input batch " + std::to_string(i) +
                             " does not have the input schema");
    }
    total_rows += b->num_rows();
  }
  if (total_rows > static_cast<int64_t>(std::numeric_limits<uint32_t>::max())) {
    return Status::Invalid("SSTable input has " + std::to_string(total_rows) +
                           " rows; the limit is 2^32 - 1");
  }

  // Keys in row-position order -> pk index (newest position per key) + superseded rows.
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(total_rows));
  for (const auto& b : input.batches) {
    for (int64_t r = 0; r < b->num_rows(); ++r) keys.push_back(encoder.Encode(*b, r));
  }
  std::vector<int64_t> superseded;
  PkIndex pk = PkIndex::Build(keys, &superseded);
  format::DeletionVector deletions;
  for (int64_t pos : superseded) deletions.Add(static_cast<uint32_t>(pos));
  format::BloomFilter bloom = format::BloomFilter::ForKeys(pk.size(), options.bloom_fp_rate);
  for (int64_t i = 0; i < pk.size(); ++i) bloom.Add(pk.key(i));
  keys.clear();
  keys.shrink_to_fit();

  arrow::ipc::WriteOptions wopts;
  wopts.compression = options.compression;
  STRATA_ASSIGN_OR_RETURN(std::string data,
                          arrow::ipc::WriteFile(*input.schema, Coalesce(input.batches), wopts));

  const std::string dir =
      options.dir_name.empty() ? NewSSTableDirName(input.generation) : options.dir_name;
  const std::pair<const char*, std::string> files[] = {
      {kDataFile, std::move(data)},
      {kDeletionsFile, deletions.Serialize()},
      {kPkIndexFile, pk.Serialize()},
      {kBloomFilterFile, bloom.Serialize()},
      {kSupersedesFile, input.supersedes.Serialize()},
  };
  int64_t bytes = 0;
  for (size_t i = 0; i < std::size(files); ++i) {
    Status st =
        store.PutIfAbsent(SSTableFileKey(shard_prefix, dir, files[i].first), files[i].second);
    if (!st.ok()) {
      // Remove what this attempt wrote, including file i when the failure's outcome is
      // unknown (never a file someone else wrote: a taken name is not ours).
      const size_t upto = st.IsAlreadyExists() ? i : i + 1;
      for (size_t j = 0; j < upto; ++j) {
        Status rs = store.Remove(SSTableFileKey(shard_prefix, dir, files[j].first));
        if (!rs.ok()) {
          spdlog::warn("SSTable {}: cleanup of {} failed: {}", dir, files[j].first, rs.ToString());
        }
      }
      return st.WithContext("SSTable " + shard_prefix + "/" + dir + "/" + files[i].first);
    }
    bytes += static_cast<int64_t>(files[i].second.size());
  }
  // On an object store the reader that opens this SSTable next (the flush or compaction that
  // wrote it) maps a local copy: make it from these bytes rather than download them back.
  if (dynamic_cast<io::LocalObjectStore*>(&store) == nullptr) {
    Status seeded = io::FetchedFiles::Global().Seed(SSTableFileKey(shard_prefix, dir, kDataFile),
                                                    files[0].second);
    if (!seeded.ok()) spdlog::debug("SSTable {}: no local copy: {}", dir, seeded.ToString());
  }
  for (const auto& idx : input.indexes) {
    // A generation with no indexable vector (only tombstones or null vectors) writes no HNSW.
    if (idx->hnsw() != nullptr && idx->hnsw()->size() == 0) continue;
    auto written = WriteIndexFile(store, shard_prefix, dir, *idx);
    if (!written.ok()) {
      Status rs = RemoveSSTable(store, shard_prefix, dir);
      if (!rs.ok()) spdlog::warn("SSTable {}: cleanup failed: {}", dir, rs.ToString());
      return written.status().WithContext("SSTable " + shard_prefix + "/" + dir + " index '" +
                                          idx->spec().name + "'");
    }
    bytes += *written;
  }

  format::SSTableEntry entry;
  entry.set_generation(input.generation);
  entry.set_path(dir);
  entry.set_rows(total_rows);
  entry.set_bytes(bytes);
  return entry;
}

}  // namespace strata::sstable
