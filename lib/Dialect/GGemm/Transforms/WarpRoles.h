//===- WarpRoles.h - the roles of ggemm-warp-specialize -------*- C++ -*-===//
//
// The tile program ggemm-warp-specialize splits, and the builders of its two
// roles: the producer (tile loads put into the ring) and the consumers (tiles
// taken from the ring, multiplied, released, then stored).
//
//===----------------------------------------------------------------------===//

#ifndef GGEMM_LIB_DIALECT_GGEMM_TRANSFORMS_WARPROLES_H
#define GGEMM_LIB_DIALECT_GGEMM_TRANSFORMS_WARPROLES_H

#include "ggemm/Dialect/GGemm/IR/GGemm.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::ggemm::warp_roles {

/// The parts of a launch's tile program the roles are built from.
struct TileProgram {
  /// The tile loop: an scf.for (persistent grid) or scf.if (one CTA per
  /// tile) directly in the launch body.
  Operation *tileLoop;
  /// The K loop, directly in the tile loop's body, carrying the accumulator.
  scf::ForOp kLoop;
  /// The mma of a K block, and the op that updates the accumulator: the
  /// mma itself, or the ggemm.promote of its product (FP8 block scales).
  MmaOp mma;
  Operation *update;
  /// The loads of the K block, in program order: the A and B tiles and,
  /// with FP8 block scales, their scales. They become the ring's entries.
  SmallVector<Operation *> loads;

  bool isLoad(Operation *op) const { return llvm::is_contained(loads, op); }
};

/// Finds the tile program in `launch`, or explains what does not fit.
FailureOr<TileProgram> matchTileProgram(LaunchOp launch);

/// Writes the producer role at `b`'s insertion point: the tile loop with
/// the loads of each K block put into `ring`.
void buildProducer(OpBuilder &b, const TileProgram &program, Value ring);

/// Writes the consumer role at `b`'s insertion point: the tile loop with
/// each K block's tiles taken from `ring`, multiplied (the mma `pending`
/// groups left in flight) and released, then the store; ping-pong
/// warpgroups on alternate tiles, and two promoted K blocks per step with
/// `promotePairs`.
void buildConsumers(OpBuilder &b, const TileProgram &program, Value ring,
                    int64_t pendingMmas, bool pingpong, bool promotePairs);

} // namespace mlir::ggemm::warp_roles

#endif // GGEMM_LIB_DIALECT_GGEMM_TRANSFORMS_WARPROLES_H
