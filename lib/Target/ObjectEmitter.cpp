//===- ObjectEmitter.cpp - LLVM IR, descriptor and machine code -----------===//
//
// Turns the LLVM-dialect module into an LLVM module that follows
// docs/runtime-abi.md: every entry kernel gets a packed wrapper
// `void <kernel>_packed(void *const *args)`, and one constant descriptor
// `dlc_model_<name>` points to the descriptor text and the wrappers.
//
//===----------------------------------------------------------------------===//
#include "dlc/Target/ModelInfo.h"
#include "dlc/Target/Pipeline.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

using namespace llvm;

Expected<std::unique_ptr<TargetMachine>>
mlir::dlc::createX86TargetMachine(StringRef cpu) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  InitializeNativeTargetAsmParser();
  Triple triple("x86_64-unknown-linux-gnu");
  std::string cpuName = cpu.str(), features;
  if (cpu == "native") {
    cpuName = sys::getHostCPUName().str();
    SubtargetFeatures f;
    for (auto &kv : sys::getHostCPUFeatures())
      f.AddFeature(kv.first(), kv.second);
    features = f.getString();
  }
  std::string err;
  const Target *target = TargetRegistry::lookupTarget(triple, err);
  if (!target)
    return createStringError(inconvertibleErrorCode(), err);
  // x86-64-v3 / -v4 are CPU names LLVM knows; anything else must be too.
  std::unique_ptr<MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(triple, cpuName, ""));
  if (!sti || !sti->isCPUStringValid(cpuName))
    return createStringError(
        inconvertibleErrorCode(),
        "unknown CPU '" + cpuName +
            "'; use native, x86-64-v3, x86-64-v4 or an LLVM CPU name "
            "such as znver4 or sapphirerapids");
  std::unique_ptr<TargetMachine> tm(target->createTargetMachine(
      triple, cpuName, features, TargetOptions(), Reloc::PIC_, std::nullopt,
      CodeGenOptLevel::Aggressive));
  if (!tm)
    return createStringError(inconvertibleErrorCode(),
                             "cannot create a target machine for " + cpuName);
  return std::move(tm);
}

/// `void <kernel>_packed(void *const *args)`: loads each data pointer from
/// `args` and calls the kernel. Returns null if the kernel's arguments are
/// not all pointers (the bare-pointer memref convention).
/// The bytes of a `data` param's value, in the runtime's layout (row-major,
/// little-endian, the element type's own width). The verifier of
/// dlc.parameter admits dense and dense_resource values only.
static std::string rawBytes(mlir::ElementsAttr value) {
  if (auto resource = dyn_cast<mlir::DenseResourceElementsAttr>(value)) {
    if (mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob()) {
      ArrayRef<char> data = blob->getData();
      return std::string(data.begin(), data.end());
    }
    return std::string();
  }
  auto dense = cast<mlir::DenseElementsAttr>(value);
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return std::string(raw.begin(), raw.end());
  std::string bytes;
  int64_t n = dense.getNumElements();
  bytes.reserve(raw.size() * n);
  for (int64_t i = 0; i < n; ++i)
    bytes.append(raw.begin(), raw.end());
  return bytes;
}

static Function *createPackedWrapper(Module &m, Function *kernel) {
  LLVMContext &ctx = m.getContext();
  PointerType *ptr = PointerType::getUnqual(ctx);
  for (Argument &a : kernel->args())
    if (!a.getType()->isPointerTy())
      return nullptr;
  auto *fnTy = FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
  Function *w = Function::Create(fnTy, GlobalValue::ExternalLinkage,
                                 kernel->getName() + "_packed", m);
  IRBuilder<> b(BasicBlock::Create(ctx, "entry", w));
  SmallVector<Value *> args;
  for (unsigned i = 0; i < kernel->arg_size(); ++i) {
    Value *slot = b.CreateConstInBoundsGEP1_64(ptr, w->getArg(0), i);
    args.push_back(b.CreateLoad(ptr, slot));
  }
  b.CreateCall(kernel, args);
  b.CreateRetVoid();
  kernel->setLinkage(GlobalValue::InternalLinkage);
  return w;
}

Expected<std::unique_ptr<Module>>
mlir::dlc::translateToLLVM(mlir::ModuleOp module, const ModelInfo &info,
                     LLVMContext &llvmContext, TargetMachine &tm) {
  // dlc's own attributes have served their purpose: they are not LLVM's.
  module.walk([](mlir::LLVM::LLVMFuncOp f) {
    f->removeAttr("dlc.entry");
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      f.removeArgAttr(i, "dlc.name");
  });
  std::unique_ptr<Module> m =
      mlir::translateModuleToLLVMIR(module, llvmContext, info.name);
  if (!m)
    return createStringError(inconvertibleErrorCode(),
                             "translation to LLVM IR failed");
  // The generic allocation functions of finalize-memref-to-llvm are
  // libdlcrt's workspace allocator.
  for (auto [from, to] :
       {std::pair{"_mlir_memref_to_llvm_alloc", "dlc_workspace_alloc"},
        {"_mlir_memref_to_llvm_aligned_alloc", "dlc_workspace_aligned_alloc"},
        {"_mlir_memref_to_llvm_free", "dlc_workspace_free"}})
    if (llvm::Function *f = m->getFunction(from))
      f->setName(to);
  m->setTargetTriple(tm.getTargetTriple());
  m->setDataLayout(tm.createDataLayout());

  PointerType *ptr = PointerType::getUnqual(llvmContext);
  llvm::Type *i32 = llvm::Type::getInt32Ty(llvmContext);
  SmallVector<Constant *> entries;
  for (const EntryInfo &e : info.entries) {
    llvm::Function *kernel = m->getFunction(e.symbol);
    if (!kernel)
      return createStringError(inconvertibleErrorCode(),
                               "entry kernel " + e.symbol + " is missing");
    llvm::Function *w = createPackedWrapper(*m, kernel);
    if (!w)
      return createStringError(inconvertibleErrorCode(),
                               "entry kernel " + e.symbol +
                                   " does not take bare pointers");
    entries.push_back(w);
  }

  Constant *text = ConstantDataArray::getString(llvmContext,
                                                info.descriptorText(), true);
  auto *textGlobal = new GlobalVariable(*m, text->getType(), true,
                                        GlobalValue::PrivateLinkage, text,
                                        "dlc_model_" + info.name + "_text");
  auto *entriesTy = ArrayType::get(ptr, entries.size());
  auto *entriesGlobal = new GlobalVariable(
      *m, entriesTy, true, GlobalValue::PrivateLinkage,
      ConstantArray::get(entriesTy, entries),
      "dlc_model_" + info.name + "_entries");
  // The initial values of `data` params, 64-byte aligned, in .rodata.
  SmallVector<Constant *> paramData;
  bool anyData = false;
  for (auto [i, p] : llvm::enumerate(info.params)) {
    if (!p.value) {
      paramData.push_back(ConstantPointerNull::get(ptr));
      continue;
    }
    std::string bytes = rawBytes(p.value);
    auto *init = ConstantDataArray::getRaw(
        bytes, bytes.size(), llvm::Type::getInt8Ty(llvmContext));
    auto *g = new GlobalVariable(*m, init->getType(), true,
                                 GlobalValue::PrivateLinkage, init,
                                 "dlc_model_" + info.name + "_param" +
                                     std::to_string(i));
    g->setAlignment(llvm::Align(64));
    paramData.push_back(g);
    anyData = true;
  }
  Constant *paramDataGlobal = ConstantPointerNull::get(ptr);
  if (anyData) {
    auto *dataTy = ArrayType::get(ptr, paramData.size());
    paramDataGlobal = new GlobalVariable(
        *m, dataTy, true, GlobalValue::PrivateLinkage,
        ConstantArray::get(dataTy, paramData),
        "dlc_model_" + info.name + "_param_data");
  }
  // struct dlc_model_desc { uint32_t; const char *; int32_t; const fn *;
  //                         const void *const *param_data; } (ABI version 2)
  auto *descTy = StructType::get(llvmContext, {i32, ptr, i32, ptr, ptr});
  Constant *desc = ConstantStruct::get(
      descTy, {ConstantInt::get(i32, 2), textGlobal,
               ConstantInt::get(i32, entries.size()), entriesGlobal,
               paramDataGlobal});
  new GlobalVariable(*m, descTy, true, GlobalValue::ExternalLinkage, desc,
                     "dlc_model_" + info.name);

  auto optimize = mlir::makeOptimizingTransformer(3, 0, &tm);
  if (Error e = optimize(m.get()))
    return std::move(e);
  return std::move(m);
}

Error mlir::dlc::emitMachineCode(Module &module, TargetMachine &tm,
                           raw_pwrite_stream &os, bool assembly) {
  legacy::PassManager codegen;
  if (tm.addPassesToEmitFile(codegen, os, nullptr,
                             assembly ? CodeGenFileType::AssemblyFile
                                      : CodeGenFileType::ObjectFile))
    return createStringError(inconvertibleErrorCode(),
                             "the target cannot emit this file type");
  codegen.run(module);
  return Error::success();
}
