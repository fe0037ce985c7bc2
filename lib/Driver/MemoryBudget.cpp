//===- MemoryBudget.cpp - a model's memory against a budget ---------------===//
//
// checkBudget compares what a model needs while its largest entry runs
// (params, optimizer state, workspace, that entry's inputs and outputs)
// with the budget. Over it, the error lists the largest consumers and
// hints at what fits: the largest batch, found by bisection over plans of
// the model imported again at other batch sizes (the plan grows with the
// batch), 16-bit saved activations, and evaluation without --train.
//
//===----------------------------------------------------------------------===//
#include "dlc/Driver/MemoryBudget.h"

#include "dlc/Driver/Errors.h"
#include "dlc/Target/Pipeline.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <unistd.h>
#include <vector>

using namespace llvm;
using namespace dlc::driver;

std::optional<int64_t> dlc::driver::parseSize(StringRef text) {
  StringRef t = text.trim();
  size_t split = t.find_first_not_of("0123456789.");
  StringRef num = t.substr(0, split), unit = t.substr(num.size()).trim();
  double v;
  if (num.empty() || num.getAsDouble(v) || v < 0)
    return std::nullopt;
  static const std::pair<const char *, double> units[] = {
      {"", 1},
      {"b", 1},
      {"k", 1024.0},
      {"kib", 1024.0},
      {"kb", 1e3},
      {"m", 1048576.0},
      {"mib", 1048576.0},
      {"mb", 1e6},
      {"g", 1073741824.0},
      {"gib", 1073741824.0},
      {"gb", 1e9},
      {"t", 1099511627776.0},
      {"tib", 1099511627776.0},
      {"tb", 1e12}};
  std::string u = unit.lower();
  for (auto [name, scale] : units)
    if (u == name) {
      double bytes = v * scale;
      if (bytes > 9.0e18)
        return std::nullopt;
      return static_cast<int64_t>(bytes);
    }
  return std::nullopt;
}

/// This machine's physical memory, the default budget of the CPU.
static int64_t physicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * page : INT64_MAX;
}

/// What a model needs while its largest entry runs: its memory (params,
/// optimizer state, workspace) and that entry's inputs and outputs.
static int64_t neededBytes(const mlir::dlc::ModelInfo &info) {
  int64_t io = 0, comm = 0;
  for (const auto &e : info.entries) {
    io = std::max(io, e.ioBytes());
    comm = std::max(comm, e.commBytes);
  }
  return info.arenaBytes() + io + comm;
}

int64_t dlc::driver::batchOf(const mlir::dlc::ModelInfo &info) {
  for (const auto &e : info.entries)
    for (const auto &t : e.inputs)
      if (!t.shape.empty())
        return t.shape[0];
  return 0;
}

std::optional<mlir::dlc::ModelInfo>
dlc::driver::plannedAt(mlir::MLIRContext &ctx, TargetMachine &tm,
                       const CompileOptions &o, int64_t b,
                       std::optional<Precision> p) {
  SourceMgr sm;
  mlir::ScopedDiagnosticHandler quiet(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  std::optional<Compiled> c = loadModel(ctx, sm, o, b, p);
  if (!c || failed(mlir::dlc::runLinalgPipeline(*c->module)) ||
      failed(
          mlir::dlc::runMemoryPlanPipeline(*c->module, codegenOptions(o, tm))))
    return std::nullopt;
  mlir::dlc::collectWorkspaceSizes(*c->module, c->info);
  return std::move(c->info);
}

/// The memory the model needs at batch `b`: imported again and lowered as
/// far as the memory plan, without diagnostics.
static std::optional<int64_t> neededAtBatch(mlir::MLIRContext &ctx,
                                            TargetMachine &tm,
                                            const CompileOptions &o,
                                            int64_t b) {
  std::optional<mlir::dlc::ModelInfo> info =
      plannedAt(ctx, tm, o, b, std::nullopt);
  if (!info)
    return std::nullopt;
  return neededBytes(*info);
}

/// The note of the largest batch that fits `budget` (found by bisection:
/// the plan grows with the batch), or that none does.
static void noteLargestBatch(mlir::InFlightDiagnostic &diag,
                             mlir::MLIRContext &ctx, TargetMachine &tm,
                             Compiled &c, const CompileOptions &o,
                             const mlir::dlc::MemoryUse &u, int64_t budget,
                             int64_t batchNow) {
  using mlir::dlc::humanBytes;
  std::optional<int64_t> one = neededAtBatch(ctx, tm, o, 1);
  if (one && *one > budget) {
    int64_t fixed = u.weights + u.optimizerState + u.stepCount + u.gradients;
    diag.attachNote(c.module->getLoc())
        << "hint: no batch size fits: at batch 1 the model still needs "
        << humanBytes(*one) << "; the weights (" << humanBytes(u.weights)
        << "), their gradients (" << humanBytes(u.gradients)
        << ") and the optimizer state ("
        << humanBytes(u.optimizerState + u.stepCount) << ") alone take "
        << humanBytes(fixed) << ", whatever the batch";
  } else if (one) {
    int64_t lo = 1, hi = batchNow; // fits(lo), !fits(hi)
    int64_t atLo = *one;           // what batch lo needs
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      std::optional<int64_t> n = neededAtBatch(ctx, tm, o, mid);
      if (n && *n <= budget) {
        lo = mid;
        atLo = *n;
      } else {
        hi = mid;
      }
    }
    diag.attachNote(c.module->getLoc())
        << "hint: the largest batch that fits is " << lo << " (--batch " << lo
        << ": " << humanBytes(atLo) << "); batch " << lo + 1 << " does not";
  }
}

/// --data-parallel=N: the note of the fewest ranks (a multiple of N that
/// divides the global batch) whose share fits `budget`, or that no number
/// does because what every rank holds in full does not.
static void noteFewestRanks(mlir::InFlightDiagnostic &diag,
                            mlir::MLIRContext &ctx, TargetMachine &tm,
                            Compiled &c, const CompileOptions &o,
                            const mlir::dlc::MemoryUse &u, int64_t budget,
                            int64_t globalBatch) {
  using mlir::dlc::humanBytes;
  for (int64_t n = o.ranks * 2; n <= globalBatch; n += o.ranks) {
    if (globalBatch % n)
      continue;
    // A sharded optimizer state is planned for its n ranks too.
    CompileOptions on = o;
    on.ranks = n;
    std::optional<int64_t> need = neededAtBatch(ctx, tm, on, globalBatch / n);
    if (need && *need <= budget) {
      diag.attachNote(c.module->getLoc())
          << "hint: " << n << " ranks fit (--data-parallel=" << n
          << "): each needs " << humanBytes(*need) << " for its "
          << globalBatch / n << " rows";
      return;
    }
  }
  if (o.shardOptimizerState) {
    int64_t replicated = u.weights + u.stepCount + u.gradients;
    diag.attachNote(c.module->getLoc())
        << "hint: no number of ranks fits: every rank holds the weights ("
        << humanBytes(u.weights) << ") and their gradients ("
        << humanBytes(u.gradients) << "), " << humanBytes(replicated)
        << " in all, whatever its share of the batch and of the optimizer "
           "state";
    return;
  }
  int64_t replicated = u.weights + u.optimizerState + u.stepCount +
                       u.gradients + u.communication;
  diag.attachNote(c.module->getLoc())
      << "hint: no number of ranks fits: every rank holds the weights ("
      << humanBytes(u.weights) << "), their gradients ("
      << humanBytes(u.gradients) << "), the optimizer state ("
      << humanBytes(u.optimizerState + u.stepCount)
      << ") and an all-reduce bucket (" << humanBytes(u.communication) << "), "
      << humanBytes(replicated)
      << " in all, whatever its share of the batch; --shard-optimizer-state "
         "divides the optimizer state over the ranks (ZeRO-1)";
}

mlir::LogicalResult dlc::driver::checkBudget(mlir::MLIRContext &ctx,
                                             TargetMachine &tm, Compiled &c,
                                             const CompileOptions &o) {
  int64_t budget = physicalMemory();
  std::string budgetName = "this machine's physical memory";
  const std::string &deviceMemory = o.budget.deviceMemory;
  if (!deviceMemory.empty()) {
    std::optional<int64_t> b = parseSize(deviceMemory);
    if (!b || *b <= 0) {
      fail("bad --device-memory '" + deviceMemory + "'",
           "a size like 8GiB, 512MiB, 16GB or a number of bytes");
      return mlir::failure();
    }
    budget = *b;
    budgetName = "--device-memory=" + deviceMemory;
  }
  const mlir::dlc::ModelInfo &info = c.info;
  int64_t need = neededBytes(info);
  if (need <= budget)
    return mlir::success();

  using mlir::dlc::humanBytes;
  using mlir::dlc::withCommas;
  const mlir::dlc::EntryInfo *worst = &info.entries.front();
  for (const auto &e : info.entries)
    if (e.workspaceBytes + e.ioBytes() >
        worst->workspaceBytes + worst->ioBytes())
      worst = &e;
  int64_t batchNow = batchOf(info);
  auto diag = mlir::emitError(c.module->getLoc())
              << "model " << info.name << " needs " << humanBytes(need) << " ("
              << withCommas(need) << " bytes) at batch " << batchNow
              << (o.ranks > 1 ? " per rank" : "") << ", more than the "
              << humanBytes(budget) << " (" << withCommas(budget)
              << " bytes) of " << budgetName;
  // The biggest consumers, largest first.
  mlir::dlc::MemoryUse u = mlir::dlc::memoryUse(info, *worst);
  std::vector<std::pair<int64_t, std::string>> parts = {
      {u.weights, "weights"},
      {u.packed, "packed weights (--pack-weights-mib)"},
      {u.optimizerState + u.stepCount, "optimizer state"},
      {u.workspace, "workspace of " + worst->name + " (gradients " +
                        humanBytes(u.gradients) + ", saved activations " +
                        humanBytes(u.savedActivations) +
                        ", other temporaries)"},
      {u.io, "inputs and outputs of " + worst->name}};
  std::sort(parts.begin(), parts.end(), std::greater<>());
  std::string list;
  for (auto &[bytes, what] : parts)
    if (bytes > 0)
      list += (list.empty() ? "" : "; ") + what + " " + humanBytes(bytes);
  diag.attachNote(c.module->getLoc()) << "it needs: " << list;

  // 1. The largest batch that fits, exactly (the plan grows with the batch);
  // data-parallel, the fewest ranks whose share fits.
  bool canRebatch = inputLanguage(o) != "mlir" && batchNow > 1;
  if (canRebatch && o.ranks > 1)
    noteFewestRanks(diag, ctx, tm, c, o, u, budget, batchNow * o.ranks);
  else if (canRebatch)
    noteLargestBatch(diag, ctx, tm, c, o, u, budget, batchNow);
  // 2. 16-bit activations.
  if (u.savedActivations > 0)
    diag.attachNote(c.module->getLoc())
        << "hint: keeping the saved activations in 16 bits would save about "
        << humanBytes(u.savedActivations / 2);
  // 3. Evaluation keeps no activations.
  for (const auto &e : info.entries)
    if (e.name == "forward" && worst->name != "forward") {
      mlir::dlc::MemoryUse f = mlir::dlc::memoryUse(info, e);
      int64_t evalOnly = f.weights + f.workspace + f.io;
      if (evalOnly <= budget)
        diag.attachNote(c.module->getLoc())
            << "hint: evaluation keeps no activations: without --train the "
               "forward entry alone needs "
            << humanBytes(evalOnly) << ", which fits";
    }
  return mlir::failure();
}
