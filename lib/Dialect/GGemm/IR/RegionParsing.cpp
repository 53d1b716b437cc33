//===- RegionParsing.cpp - parsing the regions of ggemm ops --------------===//
//
// The regions of ggemm.launch, ggemm.foreach_tile and ggemm.warp_specialize,
// parsed so that a failed parse leaves no use of a freed value behind.
//
//===----------------------------------------------------------------------===//

#include "RegionParsing.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::ggemm;

/// MLIR 22's parser resolves a forward reference written outside a region
/// (at function scope, in the enclosing `ggemm.launch` or in a sibling
/// region) to a value that the region defines. When the op that owns the
/// region then fails to parse, the region is freed with that outer use still
/// on the value's use list, and freeing the outer op writes into freed memory
/// (bench/results/2026-11-23-fuzz-50k.md, finding 3; the upstream parser
/// does the same for `tensor.generate`). Before our region ops give up, they
/// drop those uses: the outer op keeps a null operand, which it only drops.
void mlir::ggemm::detail::dropUsesOfRegionValues(Region &region) {
  auto dropBlockArguments = [](Region &r) {
    for (Block &block : r)
      for (BlockArgument arg : block.getArguments())
        arg.dropAllUses();
  };
  dropBlockArguments(region);
  region.walk([&](Operation *op) {
    for (Value result : op->getResults())
      result.dropAllUses();
    for (Region &nested : op->getRegions())
      dropBlockArguments(nested);
  });
}

ParseResult mlir::ggemm::detail::parseGuardedRegion(OpAsmParser &parser,
                                                    Region &region) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseRegion(region)) {
    dropUsesOfRegionValues(region);
    return failure();
  }
  // Created detached: ensureRegionTerminator appends it to the block itself.
  auto buildYield = [](OpBuilder &, Location loc) {
    return Operation::create(OperationState(loc, YieldOp::getOperationName()));
  };
  mlir::impl::ensureRegionTerminator(
      region, parser.getBuilder(), parser.getEncodedSourceLoc(loc), buildYield);
  return success();
}

void mlir::ggemm::detail::printGuardedRegion(OpAsmPrinter &printer, Operation *,
                                             Region &region) {
  // The terminator is elided when it is the bare implicit `ggemm.yield`.
  bool printTerminator = true;
  if (!region.empty())
    if (Operation *terminator = region.front().getTerminator())
      printTerminator = !terminator->getAttrDictionary().empty() ||
                        terminator->getNumOperands() != 0 ||
                        terminator->getNumResults() != 0;
  printer.printRegion(region, /*printEntryBlockArgs=*/true,
                      /*printBlockTerminators=*/printTerminator);
}
