# GPU engine: build/libpfft_cuda.so from cuda/pfft_cuda.cu, nvcc + cuFFT from the
# nvidia-cufft wheel (CUDA 13 layout nvidia/cu13/{include,lib}; libcufft.so.12 has no
# unversioned link, hence -l:). Where no cuFFT is found, the wheel is downloaded with
# pip and unpacked under build/cufft. NVCC_ARCH picks the GPU code (default: H100 and
# newer as SASS, plus PTX for the rest).
NVCC       ?= nvcc
CUDA_HOME  ?= /usr/local/cuda
NVCC_ARCH  ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90
CUFFT_ROOT_FOUND = $(shell $(PYTHON) cuda/find_cufft.py)
CUFFT_LIBDIR = $(firstword $(wildcard $(CUFFT_ROOT_FOUND)/lib $(CUFFT_ROOT_FOUND)/lib64))
CUFFT_SONAME = $(notdir $(firstword $(wildcard $(CUFFT_LIBDIR)/libcufft.so.[0-9]*)))

cuda: $(BUILD)/libpfft_cuda.so

$(BUILD)/cufft/.unpacked:
	mkdir -p $(BUILD)/cufft
	$(PYTHON) -m pip download -q --no-deps --only-binary :all: -d $(BUILD)/cufft nvidia-cufft
	cd $(BUILD)/cufft && $(PYTHON) -m zipfile -e nvidia_cufft-*.whl .
	touch $@

$(BUILD)/libpfft_cuda.so: cuda/pfft_cuda.cu common/lru_cache.h common/cufft_schedule.h cuda/cuda.mk $(if $(shell $(PYTHON) cuda/find_cufft.py),,$(BUILD)/cufft/.unpacked)
	mkdir -p $(BUILD)
	$(MAKE) --no-print-directory cuda-link

.PHONY: cuda-link
cuda-link:
	@test -n "$(CUFFT_ROOT_FOUND)" || (echo "no cuFFT found (see cuda/find_cufft.py)"; exit 1)
	$(NVCC) -O3 -std=c++17 -shared -Xcompiler -fPIC,-fvisibility=hidden,-Wno-return-type -diag-suppress 940,2473 $(NVCC_ARCH) \
		-I$(CUFFT_ROOT_FOUND)/include -I$(JAX_INC) -I$(CUDA_HOME)/include \
		cuda/pfft_cuda.cu -o $(BUILD)/libpfft_cuda.so.tmp \
		-L$(CUFFT_LIBDIR) -l:$(CUFFT_SONAME) -Xlinker -rpath,$(CUFFT_LIBDIR) -Xlinker --no-undefined
	mv $(BUILD)/libpfft_cuda.so.tmp $(BUILD)/libpfft_cuda.so
