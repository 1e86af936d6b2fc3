# -*- Python -*-
# lit configuration for the EPL-MLIR regression tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "EPL"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.epl_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "conftest.py", "README.md", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%epl_src_root", config.epl_src_root))
config.substitutions.append(("%epl_obj_root", config.epl_obj_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.epl_tools_dir, append_path=True)

tool_dirs = [config.epl_tools_dir, config.llvm_tools_dir]
# `not` and `count` come from PATH: a substitution would also rewrite
# those words inside expected messages.
tools = ["epl-opt", "epl-fuzz"]

# Execution tests: epl-run JIT-compiles for this machine's CPU.
if os.path.exists(os.path.join(config.epl_tools_dir, "epl-run")):
    config.available_features.add("epl-jit")
    tools.append("epl-run")

# Ahead-of-time artifacts: epl-compile writes them (with the system's C
# compiler driver as the linker), epl-exec runs them.
if os.path.exists(os.path.join(config.epl_tools_dir, "epl-exec")):
    config.available_features.add("epl-aot")
    tools += ["epl-compile", "epl-exec"]

# CUDA's ptxas (the toolkit, no GPU needed) turns PTX into cubins.
if os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("ptxas")
    llvm_config.with_environment("PATH", "/usr/local/cuda/bin", append_path=True)
    # Where gpu-module-to-binary finds libdevice (__nv_tanhf and friends).
    config.environment["CUDA_HOME"] = "/usr/local/cuda"

# Checks of the host's machine code read x86 mnemonics.
import platform
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64-host")

# Multi-process tests run under Open MPI when it is installed.
import shutil
mpirun = shutil.which("mpirun")
if mpirun:
    config.available_features.add("mpi")
    config.substitutions.append(
        ("%mpirun", mpirun + " --oversubscribe --allow-run-as-root"))

llvm_config.add_tool_substitutions(tools, tool_dirs)
