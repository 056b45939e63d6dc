# What a torch op library of fxmlir needs, for csrc/ops (the fused kernels)
# and csrc/runtime (mlir_jit): torch's headers and libraries, its OpenMP,
# C++20 and, when torch has CUDA and a CUDA compiler is found, CUDA.

# Ask the interpreter's torch where it lives instead of find_package(Torch):
# TorchConfig.cmake needs a matching CUDA toolkit, cuDNN, ... to configure,
# while a prebuilt pip torch only needs its headers and libraries.
execute_process(
  COMMAND ${Python3_EXECUTABLE} -c [=[
import torch
from torch.utils import cpp_extension
print(";".join(cpp_extension.include_paths()))
print(cpp_extension.library_paths()[0])
print(int(torch._C._GLIBCXX_USE_CXX11_ABI))
print(int(torch._C.has_openmp))
print(torch.version.cuda or "none")
]=]
  OUTPUT_VARIABLE torch_info OUTPUT_STRIP_TRAILING_WHITESPACE
  COMMAND_ERROR_IS_FATAL ANY)
string(REPLACE "\n" "|" torch_info "${torch_info}")
string(REPLACE "|" ";" torch_fields "${torch_info}")
# include_paths() is itself ;-joined, so split the fields from the end.
list(POP_BACK torch_fields FXMLIR_TORCH_CUDA_VERSION)
list(POP_BACK torch_fields torch_openmp)
list(POP_BACK torch_fields torch_cxx11_abi)
list(POP_BACK torch_fields torch_library_dir)
set(torch_include_dirs ${torch_fields})
if(FXMLIR_TORCH_CUDA_VERSION STREQUAL "none")
  set(FXMLIR_TORCH_CUDA_VERSION "")
endif()

set(torch_libraries torch torch_cpu c10)

if(FXMLIR_TORCH_CUDA_VERSION)
  set(FXMLIR_CUDA_ARCHITECTURES "90" CACHE STRING
    "CUDA architectures of the fused op kernels (CMAKE_CUDA_ARCHITECTURES syntax)")
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    # Set before enabling CUDA: CMake's default arch may be one nvcc dropped.
    set(CMAKE_CUDA_ARCHITECTURES ${FXMLIR_CUDA_ARCHITECTURES})
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    # A pip torch brings CUDA libraries but no nvcc.
    message(WARNING "fxmlir_ops: torch has CUDA ${FXMLIR_TORCH_CUDA_VERSION} "
      "but no CUDA compiler was found (set CUDACXX): building CPU kernels only")
    set(FXMLIR_TORCH_CUDA_VERSION "")
  endif()
endif()

if(FXMLIR_TORCH_CUDA_VERSION)
  enable_language(CUDA)
  if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    # CMake < 3.26 knows no C++20 flag for nvcc; nvcc >= 12 takes this one.
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  message(STATUS "fxmlir: torch has CUDA ${FXMLIR_TORCH_CUDA_VERSION}, "
    "building CUDA kernels for ${FXMLIR_CUDA_ARCHITECTURES}")
  list(APPEND torch_libraries torch_cuda c10_cuda)
  # torch's CUDA headers include the CUDA math libraries' (cuBLAS, cuSPARSE,
  # cuSOLVER), and the GEMM epilogues call cuBLASLt: the ones torch loads,
  # from its nvidia pip package where it has one, else the CUDA toolkit's.
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c [=[
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except ImportError:
    roots = []
headers = [h for r in roots for h in glob.glob(os.path.join(r, "*", "include", "cublasLt.h"))]
libs = [l for r in roots for l in glob.glob(os.path.join(r, "*", "lib", "libcublasLt.so.*"))]
print(os.path.dirname(headers[0]) if headers and libs else "")
print(sorted(libs)[0] if headers and libs else "")
]=]
    OUTPUT_VARIABLE cublaslt_info OUTPUT_STRIP_TRAILING_WHITESPACE
    COMMAND_ERROR_IS_FATAL ANY)
  string(REPLACE "\n" ";" cublaslt_info "${cublaslt_info}")
  list(LENGTH cublaslt_info cublaslt_fields)
  if(cublaslt_fields EQUAL 2)
    list(GET cublaslt_info 0 FXMLIR_CUDA_LIBRARIES_INCLUDE_DIR)
    list(GET cublaslt_info 1 FXMLIR_CUBLASLT_LIBRARY)
  else()
    find_package(CUDAToolkit REQUIRED)
    set(FXMLIR_CUDA_LIBRARIES_INCLUDE_DIR ${CUDAToolkit_INCLUDE_DIRS})
    set(FXMLIR_CUBLASLT_LIBRARY CUDA::cublasLt)
  endif()
  message(STATUS "fxmlir: cuBLASLt ${FXMLIR_CUBLASLT_LIBRARY}")
else()
  message(STATUS "fxmlir: building CPU kernels only")
endif()

foreach(lib IN LISTS torch_libraries)
  find_library(fxmlir_torch_${lib} ${lib} PATHS ${torch_library_dir}
    NO_DEFAULT_PATH REQUIRED)
endforeach()
if(torch_openmp)
  find_package(OpenMP REQUIRED COMPONENTS CXX)
  # Share torch's OpenMP runtime (one thread pool): pip wheels bundle libgomp,
  # possibly under a hashed soname.
  file(GLOB torch_gomp "${torch_library_dir}/libgomp*.so*")
  if(torch_gomp)
    list(GET torch_gomp 0 torch_gomp)
  else()
    set(torch_gomp ${OpenMP_CXX_LIBRARIES})
  endif()
endif()

# add_library(<target> SHARED <sources>) built against torch, into the
# package folder.
function(fxmlir_add_torch_library target)
  add_library(${target} SHARED ${ARGN})
  foreach(lib IN LISTS torch_libraries)
    target_link_libraries(${target} PRIVATE ${fxmlir_torch_${lib}})
  endforeach()
  # at::parallel_for is inline and parallelizes with `omp parallel` only
  # where the caller is compiled with OpenMP.
  if(torch_openmp)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:${OpenMP_CXX_FLAGS}>)
    target_link_libraries(${target} PRIVATE ${torch_gomp})
  endif()
  target_include_directories(${target} SYSTEM PRIVATE ${torch_include_dirs})
  # fxmlir/Support: header-only pieces shared with the core.
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/mlir/include)
  target_compile_definitions(${target} PRIVATE
    _GLIBCXX_USE_CXX11_ABI=${torch_cxx11_abi})
  # Torch's headers need C++20 (2.10+).
  set_target_properties(${target} PROPERTIES
    CXX_STANDARD 20
    CXX_STANDARD_REQUIRED ON
    LIBRARY_OUTPUT_DIRECTORY ${FXMLIR_PACKAGE_DIR})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O3>)
  if(FXMLIR_TORCH_CUDA_VERSION)
    set_target_properties(${target} PROPERTIES
      CUDA_STANDARD 20
      CUDA_STANDARD_REQUIRED ON
      CUDA_ARCHITECTURES "${FXMLIR_CUDA_ARCHITECTURES}"
      # Share torch's libcudart instead of a static copy.
      CUDA_RUNTIME_LIBRARY Shared)
    target_include_directories(${target} SYSTEM PRIVATE
      ${FXMLIR_CUDA_LIBRARIES_INCLUDE_DIR})
    # The __CUDA_NO_* macros as in torch's extensions: c10::Half/BFloat16
    # bring their own conversions, which cuda_fp16's would make ambiguous.
    target_compile_options(${target} PRIVATE
      "$<$<COMPILE_LANGUAGE:CUDA>:-O3;--expt-relaxed-constexpr;-D__CUDA_NO_HALF_OPERATORS__;-D__CUDA_NO_HALF_CONVERSIONS__;-D__CUDA_NO_BFLOAT16_CONVERSIONS__;-D__CUDA_NO_HALF2_OPERATORS__>")
  endif()
endfunction()
