//===- ggemm-tblgen.cpp - TableGen back ends of the ggemm dialect ---------===//
//
// mlir-tblgen plus one back end, -gen-checked-type-verifiers.
//
// ODS reports a wrong operand type by position ("operand #3 must be 1D
// memref of 32-bit signless integer values"), and the op's own verify() runs
// only after that check. ggemm ops therefore declare each operand and result
// as `GGemm_Checked<T>` (GGemmDialect.td): a constraint ODS always accepts,
// with T's summary for the docs and T itself in the field `checked`. This
// back end generates, for every op of the dialect, the check of T with the
// operand's name in the message ("operand 'weight_indices' must be 1D memref
// of 32-bit signless integer values, but got 'memref<4xi64>'"). The
// GGemm_CheckedTypes trait runs it between ODS's checks and verify(), so no
// typed accessor sees an unchecked value.
//
// It refuses an op with an operand or result that is not GGemm_Checked (or
// Optional/Variadic of one): that type would go unchecked.
//
//===----------------------------------------------------------------------===//

#include "mlir/TableGen/Format.h"
#include "mlir/TableGen/GenInfo.h"
#include "mlir/TableGen/Operator.h"
#include "mlir/Tools/mlir-tblgen/MlirTblgenMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"
#include "llvm/TableGen/TableGenBackend.h"

using namespace llvm;
using namespace mlir;
using namespace mlir::tblgen;

static cl::OptionCategory category("ggemm-tblgen options");
static cl::opt<std::string>
    dialectName("checked-types-dialect",
                cl::desc("the dialect whose ops get checked-type verifiers"),
                cl::cat(category));

namespace {
/// One operand or result of an op and the type it must have.
struct CheckedValue {
  StringRef kind; // "operand" or "result"
  StringRef name;
  unsigned odsIndex;
  std::string condition; // C++ over `type`
  std::string summary;
};
} // namespace

/// Escapes `text` for a C++ string literal.
static std::string cppString(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// The GGemm_Checked record behind `value`'s constraint, looking through
/// Optional<> and Variadic<>; null (after a TableGen error) if there is none.
static const Record *checkedRecord(const Operator &op,
                                   const NamedTypeConstraint &value,
                                   StringRef kind) {
  const Record *def = &value.constraint.getDef();
  if (def->getValue("baseType"))
    def = def->getValueAsDef("baseType");
  if (def->isSubClassOf("GGemm_Checked"))
    return def;
  PrintError(op.getLoc(),
             formatv("{0} '{1}' of '{2}' has type constraint '{3}', not "
                     "GGemm_Checked<...>: its type would go unchecked",
                     kind, value.name, op.getOperationName(),
                     value.constraint.getSummary()));
  return nullptr;
}

static bool emitCheckedTypeVerifiers(const RecordKeeper &records,
                                     raw_ostream &os) {
  emitSourceFileHeader("Named type checks of operands and results", os,
                       records);
  std::vector<Operator> ops;
  for (const Record *def : records.getAllDerivedDefinitions("Op")) {
    Operator op(def);
    if (dialectName.empty() || op.getDialectName() == dialectName)
      ops.push_back(std::move(op));
  }
  if (ops.empty()) {
    PrintError("no ops of dialect '" + dialectName + "'");
    return true;
  }

  bool failed = false;
  std::string dispatch;
  for (const Operator &op : ops) {
    std::vector<CheckedValue> values;
    auto collect = [&](StringRef kind, const NamedTypeConstraint &value,
                       unsigned odsIndex) {
      const Record *checked = checkedRecord(op, value, kind);
      if (!checked) {
        failed = true;
        return;
      }
      TypeConstraint constraint(checked->getValueAsDef("checked"));
      FmtContext ctx;
      ctx.withSelf("type");
      values.push_back({kind, value.name, odsIndex,
                        tgfmt(constraint.getConditionTemplate(), &ctx).str(),
                        constraint.getSummary().str()});
    };
    for (int i = 0, e = op.getNumOperands(); i < e; ++i)
      collect("operand", op.getOperand(i), i);
    for (int i = 0, e = op.getNumResults(); i < e; ++i)
      collect("result", op.getResult(i), i);

    std::string className = op.getQualCppClassName();
    os << formatv(
        "static ::llvm::LogicalResult verifyCheckedTypes({0} op) {{\n",
        className);
    for (const CheckedValue &value : values) {
      os << formatv("  for (::mlir::Value value : op.getODS{0}s({1})) {{\n"
                    "    ::mlir::Type type = value.getType();\n"
                    "    if (!({2}))\n"
                    "      return op.emitOpError(\"{3} '{4}' must be \")\n"
                    "             << {5} << \", but got \" << type;\n"
                    "  }\n",
                    value.kind == "operand" ? "Operand" : "Result",
                    value.odsIndex, value.condition, value.kind, value.name,
                    cppString(value.summary));
    }
    os << "  (void)op;\n  return ::mlir::success();\n}\n\n";
    dispatch += formatv("  if (auto concrete = ::llvm::dyn_cast<{0}>(op))\n"
                        "    return verifyCheckedTypes(concrete);\n",
                        className);
  }
  os << "::llvm::LogicalResult detail::verifyCheckedTypes(::mlir::Operation "
        "*op) {\n"
     << dispatch
     << "  return op->emitOpError(\"has no generated type checks\");\n}\n";
  return failed;
}

static GenRegistration genCheckedTypeVerifiers(
    "gen-checked-type-verifiers",
    "Generate named type checks of GGemm_Checked operands and results",
    emitCheckedTypeVerifiers);

int main(int argc, char **argv) { return MlirTblgenMain(argc, argv); }
