from setuptools import find_packages, setup

setup(
    name="minikeras",
    version="0.1.0",
    description="A Keras-style deep learning library on its own autograd engine (NumPy on CPU, CuPy on GPU).",
    long_description=open("README.md").read(),
    long_description_content_type="text/markdown",
    packages=find_packages(include=["minikeras", "minikeras.*"]),
    python_requires=">=3.9",
    install_requires=["numpy>=1.22", "tqdm>=4.60", "h5py>=3.0",
                      "ml_dtypes>=0.4"],  # bfloat16 (mixed_bfloat16), imported on first use
    extras_require={
        # Binary wheels only: CuPy's [ctk] extra brings the CUDA toolkit
        # libraries (cudart, NVRTC, cuBLAS, cuRAND, ...) as NVIDIA's wheels, and
        # NVIDIA's cuDNN 9 wheel the convolutions' library (device/cudnn.py loads
        # its nvidia/cudnn/lib/libcudnn.so.9; ~0.5-0.7 GB), so a machine needs
        # only the NVIDIA driver. See README "GPU".
        "gpu": ["cupy-cuda12x[ctk]>=14,<15",  # CUDA 12 (driver >= 525)
                "nvidia-cudnn-cu12>=9,<10"],
        "gpu-cu13": ["cupy-cuda13x[ctk]>=14,<15",  # CUDA 13 (driver >= 580)
                     "nvidia-cudnn-cu13>=9.12,<10"],  # 9.12: the first cuDNN built for CUDA 13
        "nccl": ["nvidia-nccl-cu12>=2.18"],  # NCCL for MirroredModel on CUDA 12
        "nccl-cu13": ["nvidia-nccl-cu13>=2.27"],
        # The mpich wheel brings the MPI library and mpiexec: no system MPI needed.
        "mpi": ["mpi4py>=4.0", "mpich>=4.2"],
        # cupy-cuda12x imports without a driver: tests check the array-module
        # calls the library makes against the real CuPy API.
        "test": ["pytest>=7", "hypothesis>=6", "cupy-cuda12x>=14,<15", "mpi4py>=4.0", "mpich>=4.2",
                 "tensorboard>=2.12",  # ~20 MB of wheels (Pillow among them), installs in seconds
                 "matplotlib>=3.5"],  # keras.visualization's galleries (~15 MB more of wheels)
        # What a Keras user brings: TensorBoard's writer and reader (the TensorBoard
        # callback writes event files through it), Pillow for the image loaders,
        # pydot (+ Graphviz's `dot`) for plot_model's .png/.svg, matplotlib for
        # keras.visualization's plot_* galleries (its draw_* functions need nothing).
        "tensorboard": ["tensorboard>=2.12"],
        "image": ["pillow>=9"],
        "pydot": ["pydot>=1.4"],
        "visualization": ["matplotlib>=3.5"],
    },
)
