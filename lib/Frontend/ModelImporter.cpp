//===- ModelImporter.cpp - .dlc model description to MLIR -----------------===//

#include "dlc/Frontend/ModelImporter.h"

#include "dlc/Dialect/Dlc/IR/DlcDialect.h"
#include "dlc/Frontend/AST.h"
#include "dlc/Frontend/Lexer.h"
#include "dlc/Frontend/MLIRGen.h"
#include "dlc/Frontend/Parser.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace {
/// Reports frontend errors through the MLIR diagnostic engine: the error at
/// the token's FileLineColLoc, then the hint as a note at the same location
/// (SourceMgrDiagnosticHandler shows the source line only once).
class MLIRDiagnosticReporter final : public ::dlc::DiagnosticReporter {
public:
  MLIRDiagnosticReporter(MLIRContext &ctx, StringRef fileName)
      : file(StringAttr::get(&ctx, fileName)) {}

  void error(::dlc::SrcLoc loc, const llvm::Twine &message,
             const llvm::Twine &hint) override {
    InFlightDiagnostic diag =
        emitError(FileLineColLoc::get(file, loc.line, loc.col), message);
    if (!hint.isTriviallyEmpty())
      diag.attachNote() << "hint: " << hint;
  }

private:
  StringAttr file;
};
} // namespace

namespace dlc {
OwningOpRef<ModuleOp> importDlcModel(llvm::SourceMgr &sourceMgr,
                                     MLIRContext &ctx,
                                     const ImportOptions &options) {
  ctx.loadDialect<mlir::dlc::DlcDialect, func::FuncDialect,
                  arith::ArithDialect>();
  if (sourceMgr.getNumBuffers() == 0) {
    emitError(UnknownLoc::get(&ctx), "no .dlc input was given");
    return nullptr;
  }
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringRef fileName = buffer->getBufferIdentifier();
  MLIRDiagnosticReporter diag(ctx, fileName);

  Parser parser(Lexer(buffer->getBuffer()).lexAll(), diag);
  std::unique_ptr<ModelAST> model = parser.parseModel();
  if (!model)
    return nullptr;
  OwningOpRef<ModuleOp> module = mlirGen(ctx, *model, fileName, options, diag);
  if (!module)
    return nullptr;
  // The checks above should make this unreachable; a failure here is a
  // frontend bug, reported by the verifier at the op's location.
  if (failed(verify(*module)))
    return nullptr;
  return module;
}
} // namespace dlc
