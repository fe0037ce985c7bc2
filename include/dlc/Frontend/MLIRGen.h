//===- MLIRGen.h - .dlc AST to the dlc dialect ------------------*- C++ -*-===//
//
// Walks a ModelAST, checks it (names, arities, keyword arguments, shapes,
// dtypes) and builds the module: the model's parameters, `@forward` and, for
// a model with a `loss` statement, `@loss`. Every op gets the FileLineColLoc
// of the expression it comes from.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_FRONTEND_MLIRGEN_H
#define DLC_FRONTEND_MLIRGEN_H

#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class MLIRContext;
class ModuleOp;
} // namespace mlir

namespace dlc {

class DiagnosticReporter;
struct ImportOptions;
struct ModelAST;

/// Builds the module for `model`; `fileName` names the source in locations.
/// Reports the first error through `diag` and returns null. The module is
/// not verified here.
mlir::OwningOpRef<mlir::ModuleOp>
mlirGen(mlir::MLIRContext &ctx, const ModelAST &model, llvm::StringRef fileName,
        const ImportOptions &options, DiagnosticReporter &diag);

} // namespace dlc

#endif // DLC_FRONTEND_MLIRGEN_H
