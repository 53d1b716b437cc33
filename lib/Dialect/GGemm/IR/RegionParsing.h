//===- RegionParsing.h - parsing the regions of ggemm ops ------*- C++ -*-===//
//
// Private to the dialect library.
//
//===----------------------------------------------------------------------===//
#ifndef GGEMM_LIB_DIALECT_GGEMM_IR_REGIONPARSING_H
#define GGEMM_LIB_DIALECT_GGEMM_IR_REGIONPARSING_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

#include "mlir/IR/OpImplementation.h"

namespace mlir::ggemm::detail {

/// Drops every use of a value that `region` defines (op results and block
/// arguments, nested regions included), wherever the use is. Called by a
/// region op whose parse fails, before its regions are freed (see
/// RegionParsing.cpp).
void dropUsesOfRegionValues(Region &region);

/// A region whose `ggemm.yield` terminator is implicit (the body of
/// `ggemm.launch` and `ggemm.foreach_tile`, the regions of
/// `ggemm.warp_specialize`), parsed so that a failure inside it leaves no
/// use of its values behind; the `custom<GuardedRegion>` directive.
ParseResult parseGuardedRegion(OpAsmParser &parser, Region &region);

/// Prints such a region, eliding a bare `ggemm.yield`.
void printGuardedRegion(OpAsmPrinter &printer, Operation *op, Region &region);

} // namespace mlir::ggemm::detail

#endif // GGEMM_LIB_DIALECT_GGEMM_IR_REGIONPARSING_H
