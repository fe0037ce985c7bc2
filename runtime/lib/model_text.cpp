//===- model_text.cpp - Parsing the model description ---------------------===//
//
// The model description of docs/runtime-abi.md:
//
//   dlc-model 1
//   name NAME
//   param NAME DTYPE SHAPE INIT BOUND     (zero or more)
//   state NAME DTYPE SHAPE [shard RANKS SHAPE]   (zero or more)
//   entry NAME                            (zero or more blocks of:)
//   in NAME DTYPE SHAPE                     (zero or more)
//   out NAME DTYPE SHAPE                    (zero or more)
//   end
//
// Lines end with '\n' (the last one may omit it); fields are separated by
// single spaces; no blank lines, tabs, carriage returns or comments.
//
//===----------------------------------------------------------------------===//

#include "internal.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

using namespace dlc::rt;

namespace {

constexpr int64_t kArenaAlignment = 64;

bool isIdentifier(std::string_view s) {
  if (s.empty() ||
      !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

/// Param and tensor names: PyTorch state_dict keys such as
/// "layers.0.weight".
bool isTensorName(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'))
      return false;
  return true;
}

int64_t roundUp(int64_t n, int64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

class ModelTextParser {
public:
  ModelTextParser(std::string_view text, ModelDecl &model)
      : Text(text), Model(model) {}

  /// Parses the whole text; on failure `err` is "line N: message".
  bool parse(std::string &err) {
    if (parseHeader() && parseBody())
      return true;
    err = Error;
    return false;
  }

private:
  enum class Line { Ok, End, Bad };

  /// Reads and checks the next line, splitting it into Fields.
  Line nextLine();
  bool error(const std::string &message);
  bool expectFieldCount(size_t count, const char *syntax);

  /// The text's version: 2 may mark entries `concurrent`.
  int Version = 1;
  bool parseHeader();
  bool parseBody();
  bool parseParam(bool isState, bool isPacked);
  /// The params and entries the C API shows: all but the packed ones and
  /// pack_weights, which must come together.
  bool countPublic();
  bool parseShard(ParamDecl &param);
  bool parseTensor(TensorDecl &tensor, const char *syntax);
  bool parseDType(std::string_view field, dlc_dtype &dtype);
  bool parseShape(std::string_view field, TensorDecl &tensor);
  bool parseBound(std::string_view field, double &bound);

  std::string_view Text;
  ModelDecl &Model;
  size_t Pos = 0;
  int LineNo = 0;
  std::vector<std::string_view> Fields;
  std::string Error;
};

bool ModelTextParser::error(const std::string &message) {
  Error = "line " + std::to_string(LineNo) + ": " + message;
  return false;
}

ModelTextParser::Line ModelTextParser::nextLine() {
  if (Pos >= Text.size())
    return Line::End;
  size_t eol = Text.find('\n', Pos);
  if (eol == std::string_view::npos)
    eol = Text.size();
  std::string_view line = Text.substr(Pos, eol - Pos);
  Pos = eol + 1;
  ++LineNo;

  auto bad = [&](const std::string &message) {
    error(message);
    return Line::Bad;
  };
  if (line.empty())
    return bad("empty line");
  for (char c : line) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f)
      return bad("unexpected byte " + std::to_string(byte) +
                 " (lines are printable ASCII, fields separated by single "
                 "spaces)");
  }
  Fields.clear();
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i < line.size() && line[i] != ' ')
      continue;
    if (i == start)
      return bad("fields must be separated by single spaces");
    Fields.push_back(line.substr(start, i - start));
    start = i + 1;
  }
  return Line::Ok;
}

bool ModelTextParser::expectFieldCount(size_t count, const char *syntax) {
  if (Fields.size() != count)
    return error(std::string("expected '") + syntax + "', got " +
                 std::to_string(Fields.size()) + " fields");
  return true;
}

bool ModelTextParser::parseDType(std::string_view field, dlc_dtype &dtype) {
  if (parseDTypeName(field, dtype))
    return true;
  return error("unknown dtype " + quote(field) +
               " (expected f32, f16, bf16, f64, i64, i32, i8 or u8)");
}

bool ModelTextParser::parseShape(std::string_view field, TensorDecl &tensor) {
  tensor.shape.clear();
  if (field != "-") {
    size_t start = 0;
    while (true) {
      size_t comma = field.find(',', start);
      std::string_view dim = field.substr(
          start, comma == std::string_view::npos ? comma : comma - start);
      int64_t value = 0;
      bool digitsOnly = !dim.empty() && dim.find_first_not_of("0123456789") ==
                                            std::string_view::npos;
      bool ok = digitsOnly && dim[0] != '0';
      if (ok) {
        auto [end, ec] =
            std::from_chars(dim.data(), dim.data() + dim.size(), value);
        ok = ec == std::errc() && end == dim.data() + dim.size();
      }
      if (!ok)
        return error("bad shape " + quote(field) +
                     ": dimensions are positive decimal integers separated "
                     "by ',' ('-' for a scalar)");
      if (tensor.shape.size() == DLC_MAX_RANK)
        return error("bad shape " + quote(field) + ": more than " +
                     std::to_string(DLC_MAX_RANK) + " dimensions");
      tensor.shape.push_back(value);
      if (comma == std::string_view::npos)
        break;
      start = comma + 1;
    }
  }
  std::string err;
  if (!computeSize(tensor.shape.data(), tensor.shape.size(), tensor.dtype,
                   tensor.numel, tensor.nbytes, err))
    return error("bad shape " + quote(field) + ": " + err);
  return true;
}

bool ModelTextParser::parseBound(std::string_view field, double &bound) {
  auto [end, ec] =
      std::from_chars(field.data(), field.data() + field.size(), bound);
  if (ec != std::errc() || end != field.data() + field.size() ||
      !std::isfinite(bound) || bound < 0)
    return error("bad bound " + quote(field) +
                 ": expected a finite non-negative number");
  return true;
}

bool ModelTextParser::parseTensor(TensorDecl &tensor, const char *syntax) {
  if (!expectFieldCount(4, syntax))
    return false;
  if (!isTensorName(Fields[1]))
    return error("bad tensor name " + quote(Fields[1]) +
                 " (letters, digits, '_' and '.')");
  tensor.name = std::string(Fields[1]);
  return parseDType(Fields[2], tensor.dtype) && parseShape(Fields[3], tensor);
}

bool ModelTextParser::parseHeader() {
  Line line = nextLine();
  if (line == Line::Bad)
    return false;
  if (line == Line::End) {
    LineNo = 1;
    return error("empty model description");
  }
  if (Fields[0] != "dlc-model")
    return error("expected 'dlc-model 1' as the first line");
  if (!expectFieldCount(2, "dlc-model VERSION"))
    return false;
  if (Fields[1] != "1" && Fields[1] != "2")
    return error("unsupported model description version " + quote(Fields[1]) +
                 " (this runtime reads versions 1 and 2)");
  Version = Fields[1][0] - '0';

  line = nextLine();
  if (line == Line::Bad)
    return false;
  if (line == Line::End) {
    LineNo = 2;
    return error("missing the 'name NAME' line");
  }
  if (Fields[0] != "name")
    return error("expected 'name NAME' as the second line");
  if (!expectFieldCount(2, "name NAME"))
    return false;
  if (!isIdentifier(Fields[1]))
    return error("bad model name " + quote(Fields[1]) +
                 " (expected a C identifier)");
  Model.name = std::string(Fields[1]);
  return true;
}

bool ModelTextParser::parseParam(bool isState, bool isPacked) {
  ParamDecl param;
  bool sharded = isState && Fields.size() == 7;
  if (!expectFieldCount(isPacked  ? 4
                        : isState ? (sharded ? 7 : 4)
                                  : 6,
                        isPacked  ? "packed NAME DTYPE SHAPE"
                        : isState ? "state NAME DTYPE SHAPE [shard RANKS SHAPE]"
                                  : "param NAME DTYPE SHAPE INIT BOUND"))
    return false;
  if (!isTensorName(Fields[1]))
    return error(std::string("bad ") +
                 (isPacked  ? "packed"
                  : isState ? "state"
                            : "param") +
                 " name " + quote(Fields[1]) +
                 " (letters, digits, '_' and '.')");
  param.name = std::string(Fields[1]);
  if (!parseDType(Fields[2], param.dtype) || !parseShape(Fields[3], param))
    return false;
  param.isPacked = isPacked;
  isState = isState || isPacked; // zero-initialised, no bound
  param.isState = isState && !isPacked;
  if (sharded && !parseShard(param))
    return false;

  std::string_view init = isState ? std::string_view("zeros") : Fields[4];
  if (init == "uniform")
    param.init = InitKind::Uniform;
  else if (init == "zeros")
    param.init = InitKind::Zeros;
  else if (init == "ones")
    param.init = InitKind::Ones;
  else if (init == "data")
    param.init = InitKind::Data;
  else
    return error("unknown init " + quote(init) +
                 " (expected uniform, zeros, ones or data)");
  bool isFloat = param.dtype == DLC_F32 || param.dtype == DLC_F16 ||
                 param.dtype == DLC_BF16 || param.dtype == DLC_F64;
  if (param.init == InitKind::Uniform && !isFloat)
    return error("param " + quote(param.name) +
                 ": 'uniform' needs a floating-point dtype, not " +
                 dtypeName(param.dtype));
  if (!isState && !parseBound(Fields[5], param.bound))
    return false;

  int64_t offset = Model.paramBytes; // Already a multiple of 64.
  if (param.nbytes > kMaxBytes - offset)
    return error("the params exceed " + std::to_string(kMaxBytes) + " bytes");
  param.offset = offset;
  Model.paramBytes = roundUp(offset + param.nbytes, kArenaAlignment);
  Model.params.push_back(std::move(param));
  return true;
}

bool ModelTextParser::parseShard(ParamDecl &param) {
  if (Version < 2)
    return error("'shard' needs version 2 of the description");
  int64_t ranks = 0;
  std::string_view field = Fields[5];
  auto [end, ec] =
      std::from_chars(field.data(), field.data() + field.size(), ranks);
  if (Fields[4] != "shard" || ec != std::errc() ||
      end != field.data() + field.size() || ranks < 1 || field[0] == '0')
    return error("expected 'shard RANKS SHAPE' after the state's shape, with "
                 "a positive number of ranks");
  if (param.dtype != DLC_F32)
    return error("state " + quote(param.name) +
                 ": a sharded state must be f32, not " +
                 dtypeName(param.dtype));
  param.whole.name = param.name;
  param.whole.dtype = param.dtype;
  if (!parseShape(Fields[6], param.whole))
    return false;
  int64_t shard = shardElements(param.whole.numel, ranks);
  if (param.shape.size() != 1 || param.shape[0] != shard)
    return error("state " + quote(param.name) + ": a shard of " +
                 std::to_string(param.whole.numel) + " elements over " +
                 std::to_string(ranks) + " ranks has shape " +
                 std::to_string(shard));
  param.shardRanks = ranks;
  return true;
}

bool ModelTextParser::parseBody() {
  std::set<std::string> paramNames;
  std::set<std::string> entryNames;
  // Of the open entry: an output may share an input's name (a model that
  // passes an input through), two inputs or two outputs may not.
  std::set<std::string> inputNames, outputNames;
  bool inEntry = false;
  bool inOutputs = false;
  int entryLine = 0;
  int workspaceLine = 0;

  Line line;
  while ((line = nextLine()) == Line::Ok) {
    std::string_view keyword = Fields[0];
    if (keyword == "param" || keyword == "state" || keyword == "packed") {
      bool isState = keyword == "state", isPacked = keyword == "packed";
      if (isPacked && Version < 2)
        return error("'packed' needs version 2 of the description");
      if (!Model.entries.empty())
        return error(quote(keyword) +
                     " after the first 'entry' (params come first)");
      if (!isState && !isPacked && !Model.params.empty() &&
          Model.params.back().isState)
        return error("'param' after a 'state' (weights come first)");
      if (!isPacked && !Model.params.empty() && Model.params.back().isPacked)
        return error(quote(keyword) +
                     " after a 'packed' (packed weights come last)");
      if (!parseParam(isState, isPacked))
        return false;
      const std::string &name = Model.params.back().name;
      if (name == "__metadata__")
        return error("param name '__metadata__' is reserved by .safetensors");
      if (!paramNames.insert(name).second)
        return error("duplicate param " + quote(name));
    } else if (keyword == "entry") {
      if (inEntry)
        return error("'entry' inside entry " +
                     quote(Model.entries.back().name) + " (missing 'end')");
      if (!expectFieldCount(2, "entry NAME"))
        return false;
      if (!isIdentifier(Fields[1]))
        return error("bad entry name " + quote(Fields[1]) +
                     " (expected a C identifier)");
      if (!entryNames.insert(std::string(Fields[1])).second)
        return error("duplicate entry " + quote(Fields[1]));
      if (!Model.entries.empty() && Model.entries.back().packWeights)
        return error("an entry after the pack_weights entry (it comes last)");
      Model.entries.emplace_back();
      Model.entries.back().name = std::string(Fields[1]);
      inEntry = true;
      inOutputs = false;
      entryLine = LineNo;
      inputNames.clear();
      outputNames.clear();
    } else if (keyword == "workspace" || keyword == "cuda_workspace") {
      // `workspace` follows `entry` directly, `cuda_workspace` follows
      // `workspace`.
      bool cuda = keyword == "cuda_workspace";
      std::string kw(keyword);
      if (!inEntry)
        return error(quote(kw) + " outside an entry block");
      EntryDecl &entry = Model.entries.back();
      if (LineNo != entryLine + 1 + cuda ||
          (cuda && workspaceLine != entryLine + 1))
        return error(cuda ? "'cuda_workspace' must follow 'workspace' directly"
                          : "'workspace' must follow 'entry' directly");
      if (!expectFieldCount(2,
                            cuda ? "cuda_workspace BYTES" : "workspace BYTES"))
        return false;
      std::string_view f = Fields[1];
      int64_t bytes = -1;
      auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), bytes);
      if (ec != std::errc() || end != f.data() + f.size() || bytes < 0 ||
          bytes > kMaxBytes / 2)
        return error("bad " + kw + " size " + quote(f) +
                     ": expected a byte count");
      entry.cudaWorkspaceBytes = bytes;
      if (cuda)
        continue;
      workspaceLine = LineNo;
      entry.workspaceBytes = bytes;
      int64_t rounded = roundUp(bytes, kArenaAlignment);
      if (rounded > Model.workspaceBytes)
        Model.workspaceBytes = rounded;
      if (Model.workspaceBytes > kMaxBytes - Model.paramBytes)
        return error("the params and the workspace exceed " +
                     std::to_string(kMaxBytes) + " bytes");
    } else if (keyword == "cpu") {
      // Version 2: the x86 features of the CPU code, before the params.
      if (Version < 2)
        return error("'cpu' needs version 2 of the description");
      if (!Model.params.empty() || !Model.entries.empty() ||
          !Model.cpuFeatures.empty())
        return error("'cpu' must come once, before the params and entries");
      if (!expectFieldCount(2, "cpu FEATURE,FEATURE,..."))
        return false;
      std::string_view list = Fields[1];
      size_t start = 0;
      while (start <= list.size()) {
        size_t end = list.find(',', start);
        if (end == std::string_view::npos)
          end = list.size();
        std::string_view f = list.substr(start, end - start);
        if (!isKnownCpuFeature(f))
          return error("unknown CPU feature " + quote(f) +
                       " (a newer dlc compiled this model: use its runtime)");
        Model.cpuFeatures.emplace_back(f);
        start = end + 1;
      }
    } else if (keyword == "pack_weights") {
      // The entry that computes the packed params: after every other entry,
      // with neither inputs nor outputs.
      if (Version < 2)
        return error("'pack_weights' needs version 2 of the description");
      if (!inEntry)
        return error("'pack_weights' outside an entry block");
      if (!expectFieldCount(1, "pack_weights"))
        return false;
      EntryDecl &entry = Model.entries.back();
      if (entry.packWeights || entry.concurrent || entry.communicator ||
          !entry.inputs.empty() || !entry.outputs.empty())
        return error("'pack_weights' must come once, in an entry without "
                     "other flags, inputs or outputs");
      entry.packWeights = true;
    } else if (keyword == "communicator" || keyword == "concurrent") {
      // Version 2 entry flags, before the entry's tensors: `communicator`
      // (the entry reduces over the ranks of a data-parallel job and takes
      // the communicator's context after the workspace), then `concurrent`
      // (calls only read the params, so several may run at once, each with
      // its own workspace).
      bool comm = keyword == "communicator";
      if (Version < 2)
        return error(quote(keyword) + " needs version 2 of the description");
      if (!inEntry)
        return error(quote(keyword) + " outside an entry block");
      if (!expectFieldCount(1, comm ? "communicator" : "concurrent"))
        return false;
      EntryDecl &entry = Model.entries.back();
      bool &flag = comm ? entry.communicator : entry.concurrent;
      if (!entry.inputs.empty() || !entry.outputs.empty() || flag ||
          (comm && entry.concurrent))
        return error(quote(keyword) + " must come once, before " +
                     (comm ? "'concurrent' and " : "") +
                     "the entry's 'in' and 'out' lines");
      flag = true;
    } else if (keyword == "in" || keyword == "out") {
      bool isOut = keyword == "out";
      if (!inEntry)
        return error(quote(keyword) + " outside an entry block");
      if (Model.entries.back().packWeights)
        return error("the pack_weights entry takes no inputs or outputs");
      if (!isOut && inOutputs)
        return error("'in' after 'out' (inputs come first)");
      TensorDecl tensor;
      if (!parseTensor(tensor,
                       isOut ? "out NAME DTYPE SHAPE" : "in NAME DTYPE SHAPE"))
        return false;
      EntryDecl &entry = Model.entries.back();
      if (!(isOut ? outputNames : inputNames).insert(tensor.name).second)
        return error("duplicate " + std::string(isOut ? "output " : "input ") +
                     quote(tensor.name) + " in entry " + quote(entry.name));
      inOutputs = isOut;
      (isOut ? entry.outputs : entry.inputs).push_back(std::move(tensor));
    } else if (keyword == "end") {
      if (!inEntry)
        return error("'end' outside an entry block");
      if (!expectFieldCount(1, "end"))
        return false;
      inEntry = false;
      Model.cudaWorkspaceBytes = std::max(
          Model.cudaWorkspaceBytes,
          roundUp(Model.entries.back().cudaWorkspaceBytes, kArenaAlignment));
    } else if (keyword == "dlc-model" || keyword == "name") {
      return error(quote(keyword) + " may only appear once, at the top");
    } else {
      return error("unknown keyword " + quote(keyword) +
                   " (expected cpu, param, state, packed, entry, workspace, "
                   "cuda_workspace, communicator, concurrent, pack_weights, "
                   "in, out or end)");
    }
  }
  if (line == Line::Bad)
    return false;
  if (inEntry) {
    LineNo = entryLine;
    return error("entry " + quote(Model.entries.back().name) + " has no 'end'");
  }
  return countPublic();
}

bool ModelTextParser::countPublic() {
  Model.numParams = static_cast<size_t>(
      std::count_if(Model.params.begin(), Model.params.end(),
                    [](const ParamDecl &p) { return !p.isPacked; }));
  Model.numEntries = Model.entries.size();
  if (!Model.entries.empty() && Model.entries.back().packWeights)
    --Model.numEntries;
  if (Model.hasPackWeights() != (Model.numParams < Model.params.size()))
    return error(Model.hasPackWeights()
                     ? "a pack_weights entry without 'packed' params"
                     : "'packed' params without a pack_weights entry");
  if (Model.numEntries == 0 && !Model.entries.empty())
    return error("the pack_weights entry is the only entry");
  return true;
}

} // namespace

bool dlc::rt::parseModelText(std::string_view text, ModelDecl &model,
                             std::string &err) {
  model = ModelDecl();
  ModelTextParser parser(text, model);
  return parser.parse(err);
}
