from setuptools import find_packages, setup

setup(
    name="minikeras",
    version="0.1.0",
    description="A Keras-style deep learning library on its own autograd engine (NumPy on CPU, CuPy on GPU).",
    long_description=open("README.md").read(),
    long_description_content_type="text/markdown",
    packages=find_packages(include=["minikeras", "minikeras.*"]),
    python_requires=">=3.9",
    install_requires=["numpy>=1.22", "tqdm>=4.60", "h5py>=3.0"],
    extras_require={
        "gpu": ["cupy>=12"],
        "mpi": ["mpi4py>=3.1"],
        "test": ["pytest>=7", "hypothesis>=6"],
    },
)
