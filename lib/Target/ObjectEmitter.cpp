//===- ObjectEmitter.cpp - LLVM IR, descriptor and machine code -----------===//
//
// Turns the LLVM-dialect module into an LLVM module that follows
// docs/runtime-abi.md: every entry kernel gets a packed wrapper
// `void <kernel>_packed(void *const *args)`, and one constant descriptor
// `dlc_model_<name>` points to the descriptor text and the wrappers.
//
//===----------------------------------------------------------------------===//
#include "dlc/Support/ReleasePages.h"
#include "dlc/Target/ModelInfo.h"
#include "dlc/Target/Pipeline.h"
#include "dlc/dlc_runtime.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"

#include <cerrno>
#include <unistd.h>

using namespace llvm;

Expected<std::unique_ptr<TargetMachine>>
mlir::dlc::createX86TargetMachine(StringRef cpu) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  InitializeNativeTargetAsmParser();
  Triple triple("x86_64-unknown-linux-gnu");
  auto [base, extra] = cpu.split('+');
  std::string cpuName = base.str();
  SubtargetFeatures features;
  if (base == "native") {
    cpuName = sys::getHostCPUName().str();
    for (auto &kv : sys::getHostCPUFeatures())
      features.AddFeature(kv.first(), kv.second);
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
            "'; use portable, native, x86-64-v3, x86-64-v4 or an LLVM CPU "
            "name such as znver4 or sapphirerapids, optionally with "
            "features (x86-64-v4+avx512bf16)");
  // The features after the CPU's name: "+avx512bf16+amx-bf16".
  SmallVector<StringRef> added;
  if (!extra.empty())
    extra.split(added, '+');
  for (StringRef f : added) {
    bool known =
        llvm::any_of(sti->getAllProcessorFeatures(),
                     [&](const SubtargetFeatureKV &kv) { return f == kv.Key; });
    if (!known)
      return createStringError(inconvertibleErrorCode(),
                               "unknown x86 feature '" + f +
                                   "' in --cpu=" + cpu +
                                   "; features are LLVM's names, "
                                   "e.g. avx512bf16");
    features.AddFeature(f);
  }
  std::unique_ptr<TargetMachine> tm(target->createTargetMachine(
      triple, cpuName, features.getString(), TargetOptions(), Reloc::PIC_,
      std::nullopt, CodeGenOptLevel::Aggressive));
  if (!tm)
    return createStringError(inconvertibleErrorCode(),
                             "cannot create a target machine for " + cpuName);
  return std::move(tm);
}

ArrayRef<StringLiteral> mlir::dlc::portableCpus() {
  static const StringLiteral kCpus[] = {"x86-64-v4+avx512bf16", "x86-64-v4",
                                        "x86-64-v3"};
  return kCpus;
}

/// The x86 features among those libdlcrt checks (runtime/lib/cpu.cpp) that
/// `tm` compiles for: the description's `cpu` line, so that an object
/// compiled for AVX-512 refuses to run on a CPU without it instead of dying
/// with SIGILL.
static SmallVector<std::string> requiredCpuFeatures(const TargetMachine &tm) {
  static const char *const kChecked[] = {
      "sse4.2",   "avx",        "fma",        "f16c",       "bmi",
      "avx2",     "bmi2",       "avx512f",    "avx512dq",   "avx512bw",
      "avx512vl", "avx512vnni", "avx512bf16", "avx512fp16", "amx-bf16"};
  SmallVector<std::string> out;
  const MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  for (const char *f : kChecked)
    if (sti && sti->checkFeatures(std::string("+") + f))
      out.push_back(f);
  return out;
}

/// `void <kernel>_packed(void *const *args)`: loads each data pointer from
/// `args` and calls the kernel. Returns null if the kernel's arguments are
/// not all pointers (the bare-pointer memref convention).
/// The bytes of a `data` param's value, in the runtime's layout (row-major,
/// little-endian, the element type's own width): a view of the attribute's
/// own storage (an external weight file stays mapped, not copied), or of
/// `storage` for a splat. The verifier of dlc.parameter admits dense and
/// dense_resource values only.
static StringRef rawBytes(mlir::ElementsAttr value, std::string &storage) {
  if (auto resource = dyn_cast<mlir::DenseResourceElementsAttr>(value)) {
    if (mlir::AsmResourceBlob *blob = resource.getRawHandle().getBlob()) {
      ArrayRef<char> data = blob->getData();
      return StringRef(data.data(), data.size());
    }
    return StringRef();
  }
  auto dense = cast<mlir::DenseElementsAttr>(value);
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return StringRef(raw.data(), raw.size());
  int64_t n = dense.getNumElements();
  storage.clear();
  storage.reserve(raw.size() * n);
  for (int64_t i = 0; i < n; ++i)
    storage.append(raw.begin(), raw.end());
  return storage;
}

/// The section of parameter i's weight placeholder: the prefix, then i.
static constexpr StringLiteral kPlaceholderSection = ".rodata.dlc.param.";

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
  for (StringRef attr :
       {"target-cpu", "target-features", "prefer-vector-width"})
    if (kernel->hasFnAttribute(attr))
      w->addFnAttr(kernel->getFnAttribute(attr));
  kernel->setLinkage(GlobalValue::InternalLinkage);
  return w;
}

/// The LLVM module of an LLVM-dialect module, for `tm`.
static Expected<std::unique_ptr<Module>>
translateModule(mlir::ModuleOp module, StringRef name, LLVMContext &llvmContext,
                TargetMachine &tm) {
  // dlc's own attributes have served their purpose: they are not LLVM's.
  module.walk([](mlir::LLVM::LLVMFuncOp f) {
    f->removeAttr("dlc.entry");
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      f.removeArgAttr(i, "dlc.name");
  });
  std::unique_ptr<Module> m =
      mlir::translateModuleToLLVMIR(module, llvmContext, name);
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
  return std::move(m);
}

/// The packed wrappers of the entries, `<symbol><suffix>` each.
static Expected<SmallVector<Constant *>>
entryWrappers(Module &m, const mlir::dlc::ModelInfo &info, StringRef suffix) {
  SmallVector<Constant *> entries;
  for (const mlir::dlc::EntryInfo *entry : info.tableEntries()) {
    const mlir::dlc::EntryInfo &e = *entry;
    std::string symbol = e.symbol + suffix.str();
    llvm::Function *kernel = m.getFunction(symbol);
    if (!kernel)
      return createStringError(inconvertibleErrorCode(),
                               "entry kernel " + symbol + " is missing");
    llvm::Function *w = createPackedWrapper(m, kernel);
    if (!w)
      return createStringError(inconvertibleErrorCode(),
                               "entry kernel " + symbol +
                                   " does not take bare pointers");
    entries.push_back(w);
  }
  return entries;
}

/// Compiles every function `m` defines for `tm`'s CPU and features,
/// whatever CPU the object's target machine has (function attributes, as
/// `__attribute__((target))`).
static void setTargetAttributes(Module &m, const TargetMachine &tm) {
  bool wide = mlir::dlc::vectorBitsOf(tm) == 512;
  for (llvm::Function &f : m)
    if (!f.isDeclaration()) {
      f.addFnAttr("target-cpu", tm.getTargetCPU());
      if (!tm.getTargetFeatureString().empty())
        f.addFnAttr("target-features", tm.getTargetFeatureString());
      if (wide)
        f.addFnAttr("prefer-vector-width", "512");
    }
}

/// The symbol suffix of a CPU variant: "_x86_64_v4_avx512bf16".
static std::string variantSuffix(StringRef name) {
  std::string suffix = "_";
  for (char c : name)
    suffix += isAlnum(c) ? c : '_';
  return suffix;
}

/// Links the CPU variant `v` into `m`: its functions compiled for its own
/// CPU, its externally visible definitions (the entry kernels) renamed with
/// its suffix so that they sit beside the base ones.
static Error linkVariant(Module &m, const mlir::dlc::CpuVariant &v,
                         StringRef modelName) {
  auto translated = translateModule(v.module, modelName, m.getContext(), *v.tm);
  if (!translated)
    return translated.takeError();
  Module &vm = **translated;
  std::string suffix = variantSuffix(v.name);
  for (GlobalValue &g : vm.global_values())
    if (!g.isDeclaration() && !g.hasLocalLinkage())
      g.setName(g.getName() + suffix);
  setTargetAttributes(vm, *v.tm);
  vm.setDataLayout(m.getDataLayout());
  if (Linker::linkModules(m, std::move(*translated)))
    return createStringError(inconvertibleErrorCode(),
                             "cannot link the " + v.name + " variant");
  return Error::success();
}

Expected<std::unique_ptr<Module>> mlir::dlc::translateToLLVM(
    mlir::ModuleOp module, const ModelInfo &info, LLVMContext &llvmContext,
    TargetMachine &tm, mlir::ModuleOp cuda, const CudaCode *cudaCode,
    bool weightPlaceholders, ArrayRef<CpuVariant> variants, StringRef cpuName) {
  auto translated = translateModule(module, info.name, llvmContext, tm);
  if (!translated)
    return translated.takeError();
  std::unique_ptr<Module> m = std::move(*translated);
  if (cuda) {
    auto cudaModule =
        translateModule(cuda, info.name + "_cuda", llvmContext, tm);
    if (!cudaModule)
      return cudaModule.takeError();
    if (Linker::linkModules(*m, std::move(*cudaModule)))
      return createStringError(inconvertibleErrorCode(),
                               "cannot link the CUDA host code");
  }

  setTargetAttributes(*m, tm);
  for (const CpuVariant &v : variants)
    if (Error e = linkVariant(*m, v, info.name))
      return std::move(e);

  PointerType *ptr = PointerType::getUnqual(llvmContext);
  llvm::Type *i32 = llvm::Type::getInt32Ty(llvmContext);
  auto wrappers = entryWrappers(*m, info, "");
  if (!wrappers)
    return wrappers.takeError();
  SmallVector<Constant *> entries = std::move(*wrappers);
  auto stringGlobal = [&](StringRef value, const Twine &name) {
    Constant *init = ConstantDataArray::getString(llvmContext, value, true);
    return new GlobalVariable(*m, init->getType(), true,
                              GlobalValue::PrivateLinkage, init, name);
  };
  // struct dlc_cpu_variant { const char *name; const char *features;
  //                          const fn *entries; }, best first.
  auto *variantTy = StructType::get(llvmContext, {ptr, ptr, ptr});
  SmallVector<Constant *> variantDescs;
  for (const CpuVariant &v : variants) {
    std::string prefix = "dlc_model_" + info.name + variantSuffix(v.name);
    auto variantWrappers = entryWrappers(*m, info, variantSuffix(v.name));
    if (!variantWrappers)
      return variantWrappers.takeError();
    // Reached through the descriptor only: not exported.
    for (Constant *w : *variantWrappers)
      cast<llvm::Function>(w)->setLinkage(GlobalValue::InternalLinkage);
    auto *entriesTy = ArrayType::get(ptr, variantWrappers->size());
    auto *entriesGlobal = new GlobalVariable(
        *m, entriesTy, true, GlobalValue::PrivateLinkage,
        ConstantArray::get(entriesTy, *variantWrappers), prefix + "_entries");
    variantDescs.push_back(ConstantStruct::get(
        variantTy, {stringGlobal(v.name, prefix + "_name"),
                    stringGlobal(join(requiredCpuFeatures(*v.tm), ","),
                                 prefix + "_features"),
                    entriesGlobal}));
  }
  Constant *variantsGlobal = ConstantPointerNull::get(ptr);
  if (!variantDescs.empty()) {
    auto *arrayTy = ArrayType::get(variantTy, variantDescs.size());
    variantsGlobal =
        new GlobalVariable(*m, arrayTy, true, GlobalValue::PrivateLinkage,
                           ConstantArray::get(arrayTy, variantDescs),
                           "dlc_model_" + info.name + "_cpu_variants");
  }

  Constant *text = ConstantDataArray::getString(
      llvmContext, info.descriptorText(requiredCpuFeatures(tm)), true);
  auto *textGlobal =
      new GlobalVariable(*m, text->getType(), true, GlobalValue::PrivateLinkage,
                         text, "dlc_model_" + info.name + "_text");
  auto *entriesTy = ArrayType::get(ptr, entries.size());
  auto *entriesGlobal =
      new GlobalVariable(*m, entriesTy, true, GlobalValue::PrivateLinkage,
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
    std::string storage;
    StringRef bytes = rawBytes(p.value, storage);
    llvm::Type *i8 = llvm::Type::getInt8Ty(llvmContext);
    bool placeholder = weightPlaceholders && bytes.size() >= kPlaceholderBytes;
    Constant *init =
        placeholder
            ? ConstantAggregateZero::get(ArrayType::get(i8, bytes.size()))
            : ConstantDataArray::getRaw(bytes, bytes.size(), i8);
    auto *g = new GlobalVariable(
        *m, init->getType(), true, GlobalValue::PrivateLinkage, init,
        "dlc_model_" + info.name + "_param" + std::to_string(i));
    g->setAlignment(llvm::Align(64));
    if (placeholder)
      g->setSection(kPlaceholderSection.str() + std::to_string(i));
    paramData.push_back(g);
    anyData = true;
  }
  Constant *paramDataGlobal = ConstantPointerNull::get(ptr);
  if (anyData) {
    auto *dataTy = ArrayType::get(ptr, paramData.size());
    paramDataGlobal =
        new GlobalVariable(*m, dataTy, true, GlobalValue::PrivateLinkage,
                           ConstantArray::get(dataTy, paramData),
                           "dlc_model_" + info.name + "_param_data");
  }
  // struct dlc_model_desc { uint32_t abi_version; const char *text;
  //                         int32_t num_entries; const fn *entries;
  //                         const void *const *param_data;
  //                         const dlc_cuda_module *cuda;
  //                         const char *cpu_name; int32_t num_cpu_variants;
  //                         const dlc_cpu_variant *cpu_variants; }
  // at DLC_ABI_VERSION; `cuda` is null without CUDA code.
  static_assert(DLC_ABI_VERSION == 4,
                "the descriptor below is the layout of ABI version 4");
  SmallVector<llvm::Type *> fields = {i32, ptr, i32, ptr, ptr,
                                      ptr, ptr, i32, ptr};
  SmallVector<Constant *> values = {
      ConstantInt::get(i32, DLC_ABI_VERSION),
      textGlobal,
      ConstantInt::get(i32, entries.size()),
      entriesGlobal,
      paramDataGlobal,
      ConstantPointerNull::get(ptr),
      stringGlobal(cpuName.empty() ? tm.getTargetCPU() : cpuName,
                   "dlc_model_" + info.name + "_cpu_name"),
      ConstantInt::get(i32, variantDescs.size()),
      variantsGlobal};
  constexpr size_t kCudaField = 5;
  if (cuda && cudaCode) {
    auto cudaWrappers = entryWrappers(*m, info, kCudaEntrySuffix);
    if (!cudaWrappers)
      return cudaWrappers.takeError();
    std::string prefix = "dlc_model_" + info.name + "_cuda";
    auto *cudaEntriesTy = ArrayType::get(ptr, cudaWrappers->size());
    auto *cudaEntries = new GlobalVariable(
        *m, cudaEntriesTy, true, GlobalValue::PrivateLinkage,
        ConstantArray::get(cudaEntriesTy, *cudaWrappers), prefix + "_entries");
    Constant *ptxText =
        ConstantDataArray::getString(llvmContext, cudaCode->ptx, true);
    auto *ptx = new GlobalVariable(*m, ptxText->getType(), true,
                                   GlobalValue::PrivateLinkage, ptxText,
                                   prefix + "_ptx");
    SmallVector<Constant *> names;
    for (const std::string &k : cudaCode->kernels) {
      Constant *name = ConstantDataArray::getString(llvmContext, k, true);
      names.push_back(new GlobalVariable(*m, name->getType(), true,
                                         GlobalValue::PrivateLinkage, name,
                                         prefix + "_kernel_name"));
    }
    auto *namesTy = ArrayType::get(ptr, names.size());
    auto *namesGlobal = new GlobalVariable(
        *m, namesTy, true, GlobalValue::PrivateLinkage,
        ConstantArray::get(namesTy, names), prefix + "_kernel_names");
    // struct dlc_cuda_module { const char *ptx; int32_t num_kernels;
    //                          const char *const *kernel_names;
    //                          const fn *entries; }
    auto *cudaTy = StructType::get(llvmContext, {ptr, i32, ptr, ptr});
    auto *cudaDesc = new GlobalVariable(
        *m, cudaTy, true, GlobalValue::PrivateLinkage,
        ConstantStruct::get(cudaTy, {ptx, ConstantInt::get(i32, names.size()),
                                     namesGlobal, cudaEntries}),
        prefix);
    values[kCudaField] = cudaDesc;
  }
  auto *descTy = StructType::get(llvmContext, fields);
  Constant *desc = ConstantStruct::get(descTy, values);
  new GlobalVariable(*m, descTy, true, GlobalValue::ExternalLinkage, desc,
                     "dlc_model_" + info.name);

  auto optimize = mlir::makeOptimizingTransformer(3, 0, &tm);
  if (Error e = optimize(m.get()))
    return std::move(e);
  return std::move(m);
}

Error mlir::dlc::writeWeights(StringRef objectPath, const ModelInfo &info) {
  auto fail = [&](const Twine &msg) {
    return createStringError(inconvertibleErrorCode(),
                             "cannot write the weights into '" + objectPath +
                                 "': " + msg);
  };
  // The section headers: which file range each placeholder occupies.
  auto object = object::ObjectFile::createObjectFile(objectPath);
  if (!object)
    return fail(toString(object.takeError()));
  if (!isa<object::ELFObjectFileBase>(object->getBinary()))
    return fail("weight placeholders are written into ELF objects only");
  StringMap<std::pair<uint64_t, uint64_t>> ranges; // name -> offset, size
  for (const object::SectionRef &s : object->getBinary()->sections()) {
    Expected<StringRef> name = s.getName();
    if (!name)
      return fail(toString(name.takeError()));
    if (name->starts_with(kPlaceholderSection))
      ranges[*name] = {object::ELFSectionRef(s).getOffset(), s.getSize()};
  }
  int fd = -1;
  if (std::error_code ec = sys::fs::openFileForReadWrite(
          objectPath, fd, sys::fs::CD_OpenExisting, sys::fs::OF_None))
    return fail(ec.message());
  llvm::scope_exit closeFd(
      [&] { sys::Process::SafelyCloseFileDescriptor(fd); });
  for (auto [i, p] : llvm::enumerate(info.params)) {
    if (!p.value)
      continue;
    std::string storage;
    StringRef bytes = rawBytes(p.value, storage);
    if (bytes.size() < kPlaceholderBytes)
      continue;
    auto it = ranges.find(kPlaceholderSection.str() + std::to_string(i));
    if (it == ranges.end() || it->second.second != bytes.size())
      return fail("no placeholder of " + Twine(bytes.size()) +
                  " bytes for parameter '" + p.name + "'");
    // In chunks, each chunk's source pages released once written: a mapped
    // weight file is read once and never held whole.
    constexpr size_t kChunk = size_t(16) << 20;
    for (size_t done = 0; done < bytes.size();) {
      size_t n = std::min(kChunk, bytes.size() - done);
      ssize_t w =
          ::pwrite(fd, bytes.data() + done, n, off_t(it->second.first + done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return fail(std::error_code(errno, std::generic_category()).message());
      ::dlc::releasePages(bytes.data() + done, size_t(w));
      done += size_t(w);
    }
  }
  return Error::success();
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
