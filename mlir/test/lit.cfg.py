# lit configuration for the fxmlir-opt tests: every .mlir file under this
# directory runs its RUN lines with fxmlir-opt, FileCheck and not on PATH.
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "fxmlir"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.fxmlir_obj_root

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["fxmlir-opt"], [config.fxmlir_tools_dir, config.llvm_tools_dir]
)

# The CUDA kernels are assembled with ptxas where CUDA is installed; tests
# that need it say REQUIRES: ptxas and are reported unsupported elsewhere.
if shutil.which("ptxas"):
    config.available_features.add("ptxas")
