// strata_ipc_tool: a small CLI around the Arrow IPC reader/writer for interop tests.
//   strata_ipc_tool read FILE                 canonical JSON dump (schema + values) to stdout;
//                                             FILE may be an IPC stream or file (by magic)
//   strata_ipc_tool write-sample DIR [--exclude F1,F2]
//                                             writes every-type samples: stream.arrows,
//                                             file.arrow, lz4.arrows, zstd.arrows,
//                                             lz4_file.arrow, sliced.arrows, empty.arrows and
//                                             the expected dump of each as NAME.json
//   strata_ipc_tool messages FILE             JSON list of a stream's messages (header, rows,
//                                             compression) ending with {"eos": bool}
//   strata_ipc_tool roundtrip IN OUT [--file] [--lz4|--zstd] [--append-empty]
//                                             reads IN, writes OUT (stream unless --file),
//                                             optionally adding a 0-row batch at the end
// Exit status 0 on success; 1 with the error on stderr otherwise.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "../arrow/ipc_test_util.h"
#include "arrow/ipc/fbs/Message_generated.h"
#include "arrow/ipc/message.h"
#include "arrow/ipc/reader.h"
#include "arrow/ipc/writer.h"

namespace {

using namespace strata;         // NOLINT
using namespace strata::arrow;  // NOLINT

int Fail(const std::string& m) {
  std::cerr << "error: " << m << "\n";
  return 1;
}

bool ReadAll(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

bool WriteAll(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  return static_cast<bool>(f);
}

Result<ipc::ReadResult> ReadAny(const std::string& path) {
  std::string bytes;
  if (!ReadAll(path, &bytes)) return Status::IOError("cannot read " + path);
  BufferPtr buf = Buffer::CopyFrom(bytes.data(), static_cast<int64_t>(bytes.size()));
  if (bytes.size() >= 6 && bytes.compare(0, 6, "ARROW1") == 0) return ipc::ReadFile(buf);
  return ipc::ReadStream(buf);
}

// AllTypesSchema without the fields named in `exclude` (comma-separated).
SchemaPtr SampleSchema(const std::string& exclude) {
  auto all = testing::AllTypesSchema();
  std::vector<FieldPtr> keep;
  const std::string padded = "," + exclude + ",";
  for (const auto& f : all->fields()) {
    if (padded.find("," + f->name + ",") == std::string::npos) keep.push_back(f);
  }
  return std::make_shared<const Schema>(std::move(keep), all->metadata());
}

int WriteSample(const std::string& dir, const std::string& exclude) {
  auto schema = SampleSchema(exclude);
  auto b1 = testing::SampleBatch(schema, 37, 0);
  auto b0 = testing::SampleBatch(schema, 0, 0);
  auto b2 = testing::SampleBatch(schema, 5, 3);
  if (!b1.ok() || !b0.ok() || !b2.ok()) return Fail("building samples failed");
  const std::vector<RecordBatchPtr> batches = {*b1, *b0, *b2};
  struct Out {
    std::string name;
    bool file;
    ipc::Compression c;
    std::vector<RecordBatchPtr> batches;
  };
  std::vector<Out> outs = {
      {"stream.arrows", false, ipc::Compression::kNone, batches},
      {"file.arrow", true, ipc::Compression::kNone, batches},
      {"lz4.arrows", false, ipc::Compression::kLz4Frame, batches},
      {"zstd.arrows", false, ipc::Compression::kZstd, batches},
      {"lz4_file.arrow", true, ipc::Compression::kLz4Frame, batches},
      {"sliced.arrows", false, ipc::Compression::kNone, {(*b1)->Slice(3, 21)}},
      {"empty.arrows", false, ipc::Compression::kNone, {}},
  };
  for (const auto& o : outs) {
    ipc::WriteOptions wo;
    wo.compression = o.c;
    auto bytes =
        o.file ? ipc::WriteFile(*schema, o.batches, wo) : ipc::WriteStream(*schema, o.batches, wo);
    if (!bytes.ok()) return Fail(o.name + ": " + bytes.status().ToString());
    if (!WriteAll(dir + "/" + o.name, *bytes)) return Fail("cannot write " + dir + "/" + o.name);
    const std::string dump = testing::DumpJson(*schema, o.batches).dump();
    if (!WriteAll(dir + "/" + o.name + ".json", dump)) return Fail("cannot write json");
  }
  return 0;
}

int Roundtrip(const std::vector<std::string>& args) {
  if (args.size() < 2) return Fail("roundtrip IN OUT [--file] [--lz4|--zstd]");
  bool file = false;
  bool append_empty = false;
  ipc::WriteOptions wo;
  for (size_t i = 2; i < args.size(); ++i) {
    if (args[i] == "--file") {
      file = true;
    } else if (args[i] == "--lz4") {
      wo.compression = ipc::Compression::kLz4Frame;
    } else if (args[i] == "--append-empty") {
      append_empty = true;
    } else if (args[i] == "--zstd") {
      wo.compression = ipc::Compression::kZstd;
    } else {
      return Fail("unknown option " + args[i]);
    }
  }
  auto r = ReadAny(args[0]);
  if (!r.ok()) return Fail(r.status().ToString());
  if (append_empty) {
    std::vector<ArrayDataPtr> cols;
    for (const auto& f : r->schema->fields()) {
      ArrayBuilder b(f->type);
      auto a = b.Finish();
      if (!a.ok()) return Fail(a.status().ToString());
      cols.push_back(*a);
    }
    r->batches.push_back(std::make_shared<RecordBatch>(r->schema, 0, std::move(cols)));
  }
  auto bytes = file ? ipc::WriteFile(*r->schema, r->batches, wo)
                    : ipc::WriteStream(*r->schema, r->batches, wo);
  if (!bytes.ok()) return Fail(bytes.status().ToString());
  if (!WriteAll(args[1], *bytes)) return Fail("cannot write " + args[1]);
  return 0;
}

// Lists the messages of a stream: header kind, rows, body compression; a final {"eos":...}.
int Messages(const std::string& path) {
  namespace fb = org::apache::arrow::flatbuf;
  std::string bytes;
  if (!ReadAll(path, &bytes)) return Fail("cannot read " + path);
  BufferPtr buf = Buffer::CopyFrom(bytes.data(), static_cast<int64_t>(bytes.size()));
  nlohmann::json out = nlohmann::json::array();
  int64_t pos = 0;
  while (true) {
    auto mv = ipc::internal::ReadMessageAt(buf, pos);
    if (!mv.ok()) return Fail(mv.status().ToString());
    if (mv->eos) {
      // An explicit EOS marker leaves 8 bytes (4 in the legacy framing) after the last message.
      out.push_back({{"eos", pos < buf->size()}, {"offset", pos}});
      break;
    }
    const fb::Message* m = mv->message;
    nlohmann::json j = {{"header", fb::EnumNameMessageHeader(m->header_type())},
                        {"body_length", m->bodyLength()}};
    if (const fb::RecordBatch* rb = m->header_as_RecordBatch()) {
      j["length"] = rb->length();
      j["compression"] =
          rb->compression() ? fb::EnumNameCompressionType(rb->compression()->codec()) : "NONE";
    }
    out.push_back(j);
    pos = mv->end;
  }
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return Fail("usage: read FILE | write-sample DIR | roundtrip IN OUT [...]");
  const std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "read" && args.size() == 1) {
    auto r = ReadAny(args[0]);
    if (!r.ok()) return Fail(r.status().ToString());
    std::cout << testing::DumpJson(*r->schema, r->batches).dump() << "\n";
    return 0;
  }
  if (cmd == "write-sample" && args.size() == 1) return WriteSample(args[0], "");
  if (cmd == "write-sample" && args.size() == 3 && args[1] == "--exclude") {
    return WriteSample(args[0], args[2]);
  }
  if (cmd == "roundtrip") return Roundtrip(args);
  if (cmd == "messages" && args.size() == 1) return Messages(args[0]);
  return Fail("unknown command " + cmd);
}
