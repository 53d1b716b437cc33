# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "GGEMM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ggemm_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "gpu", "python", "Inputs"]

# Variables in CHECK lines are local to each CHECK-LABEL block.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", ".so"))
config.substitutions.append(("%runner_utils_dir", config.runner_utils_dir))
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(config.runner_utils_dir,
                  "libmlir_c_runner_utils" + ".so")))
config.substitutions.append(
    ("%mlir_runner_utils",
     os.path.join(config.runner_utils_dir,
                  "libmlir_runner_utils" + ".so")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
# LLVM's test tools (`not`, `count`) wherever they appear in a RUN line.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.use_default_substitutions()

tool_dirs = [config.ggemm_tools_dir, config.llvm_tools_dir]
tools = ["gemm-opt", "mlir-runner", "mlir-translate"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
if config.mlir_runner and os.path.exists(config.mlir_runner):
    config.available_features.add("mlir-runner")
# Memory-error checks of parser failure paths (scripts/setup.sh installs it).
if shutil.which("valgrind"):
    config.available_features.add("valgrind")
config.substitutions.append(("%python", config.python_executable))
