"""The documented exceptions of the Keras-referenced argument fuzz (issue 36),
read by ``keras_reference.py``: where minikeras answers differently from
Keras 3's recorded (TensorFlow) answer on purpose, refuses on purpose what
Keras takes, or answers where Keras's refusal is only its TensorFlow
backend's. Each pattern of call labels (``"sum(axis=1.5)"``) or of Keras's
error (``"ValueError: ..."``) carries the reason, checked by hand against
Keras's source, its other backends, NumPy or JAX.
"""

# Outputs defined only up to a choice Keras and minikeras make differently
# (eigenvector signs, uninitialised memory, random draws): shapes and dtypes only.
SHAPE_ONLY = {"empty", "empty_like", "eig", "eigh", "svd", "qr", "image.elastic_transform"}

# Ops whose answer is a Python number or a tuple of them (``ops.shape``): compared by value only.
PYTHON_NUMBERS = {"ndim", "shape", "size"}

# Label patterns -> why minikeras refuses what Keras takes (minikeras's own rules).
REFUSED_ON_PURPOSE = {
    r"[\w.]+\(\w+=list\)": "ops take tensors, arrays and numbers; a nested list is refused with a hint to wrap "
                             "it (tests/ops/test_arithmetic.py::test_lists_are_refused); models convert lists",
    r"[\w.]+\(\w+=(True|False)\)": "a bool is no number, size, axis or tensor operand of these ops",
    r"[\w.]+\(\w+=(nan|inf|1000000000000|-1000000000000|-7|-1|-0.5)\)":
        "numeric settings are finite and in their range (Keras's TensorFlow backend runs them, to garbage)",
    r"[\w.]+\(\w+=(real_)?complex64\)|[\w.]+\(\w+=\(1\+2j\)\)":
        "complex operands are refused by the ops of real numbers (ops/_entry.REAL_ONLY, the activations, "
        "normalisations and losses): a cast would drop the imaginary part",
}

# Label patterns -> why minikeras's answer differs from Keras's TensorFlow backend on purpose
# (NumPy's answer, or a documented choice); each was checked by hand.
DIFFERS_ON_PURPOSE = {
    r"(max_pool|adaptive_max_pool|segment_max|segment_min|argmax|argmin|argsort|sort|searchsorted|unique|angle)"
    r"\(\w+=(one_nan|all_nan)\)":
        "NaN: TensorFlow's max-pool, segment and arg kernels skip it (-FLT_MAX for an all-NaN window) and its sort "
        "puts it first; minikeras gives NumPy's answer (NaN propagates, sorts last)",
    r"heaviside\(x1=(one_nan|all_nan)\)": "heaviside(NaN) is NaN (NumPy); TensorFlow gives -1",
    r"floor_divide\(.*\)": "floor_divide is NumPy's exact floor (Python's //): 2 // 0.0434782617 is 45; TensorFlow "
                            "floors the rounded float32 quotient (46)",
    r"(isclose|nextafter|nancumsum|nancumprod)\(\w+=inf\)":
        "infinities as NumPy (isclose(1, inf) is False, nancumsum keeps inf); TensorFlow clamps or compares them "
        "as numbers",
    r"(linspace|logspace|geomspace)\((start|stop)=(one_nan|all_nan|inf)\)":
        "a NaN or inf endpoint makes its whole lane NaN (start + i * step); TensorFlow's formula leaves some "
        "entries finite",
    r"in_top_k\((predictions=inf|k=1000000000000)\)":
        "k at least the number of classes puts every target in the top k, and an inf score ranks first (NumPy's "
        "order); TensorFlow answers False for both",
    r"(tril\(k=-1000000000000\)|triu\(k=1000000000000\))":
        "a diagonal past the matrix zeroes it all (NumPy); Keras's TensorFlow code turns the huge k into 'keep all'",
    r"top_k\(sorted=False\)": "with sorted=False the order of the top k is the implementation's (the values match)",
    r"where\(condition=complex64\)": "a complex condition is true where it is nonzero (NumPy); TensorFlow reads its "
                                      "real part",
    r"vdot\(x1=complex64\)": "vdot conjugates its first operand (NumPy's definition); Keras's TensorFlow does not",
    r"(correlate\(x[12]=complex64\)|eigh\(x=complex64\)|view_as_complex\(x=float64\)|trapezoid\(dx=\(1\+2j\)\))":
        "complex dtypes as NumPy (a complex correlation stays complex, a Hermitian matrix has real eigenvalues, "
        "float64 pairs make complex128); Keras's TensorFlow backend drops or adds an imaginary part",
    r"argpartition\(.*\)": "Keras's TensorFlow argpartition is broken (its base call fails; other calls give indices "
                            "that are no permutation)",
    r"arange\(step=-1000000000000\)": "a step away from stop gives NumPy's empty range",
    r"vstack\(xs=empty_arrays\)": "vstack of two empty vectors is NumPy's (2, 0)",
    r"get_item\(x=list\)": "a list is made a tensor first (Keras's TensorFlow code indexes the Python list)",
    r"norm\(x=complex64\)": "the norm of complex entries is a real number (NumPy); Keras's TensorFlow returns it "
                             "as complex",
    r"lstsq\(rcond=.*\)": "the base matrix is rank-deficient: minikeras gives NumPy's (LAPACK gelsd) answer, which "
                          "does not move with rcond here; Keras's TensorFlow solve returns other solutions",
    r"matrix_rank\(tol=.*\)": "tol is NumPy's absolute threshold on the singular values",
    r"polar\(abs_=inf\)": "an infinite magnitude follows NumPy's complex arithmetic (inf * 0 is NaN)",
    r"softmax\(x=(one_nan|inf)\)": "a NaN or inf logit makes its row NaN (NumPy's arithmetic); TensorFlow zeroes the rest",
    r"roll\(shift=-?1000000000000\)": "TensorFlow takes the shift as an int32 (10**12 wraps); minikeras rolls by it",
    r"rot90\(k=2\)": "Keras's TensorFlow rot90 of a 3-D tensor by 180 degrees picks the wrong slices (NumPy's here)",
    r"kaiser\(beta=.*\)": "Keras's TensorFlow kaiser of a negative or huge beta (NumPy's window is even in beta)",
    r"gelu\((x=\w+)?\)": "ops.gelu's default here is the exact erf form (documented in ops/nn/activations.py)",
    r"sparsemax\(.*\)": "Keras's TensorFlow sparsemax computes tau wrongly (tests/ops/test_keras_ops_parity.KERAS_BUGS)",
    r"histogram\(x=(int32|inf|empty)\)|histogram\(range=\(0, 0\)\)":
        "TensorFlow's fixed-width histogram drops values on the last edge, of ints and infs; minikeras's is NumPy's",
    r"(batch_normalization|layer_normalization|rms_normalization|moments|soft_shrink)\(x=(int32|bool)\)":
        "integer input is normalised in float32; Keras's TensorFlow backend casts the result back to the int dtype",
}

REFUSED_ON_PURPOSE.update({
    r"(stft|istft)\(sequence_length=0\)": "a window of 0 samples frames nothing (torch's answer is NaN, TensorFlow's zeros)",
    r"istft\(window='(a|float32|valid|)'\)":
        "window is 'hann', 'hamming', None or a tensor: Keras's stft refuses other strings; its TensorFlow istft "
        "reads any other string as 'hamming' (its JAX istft hands it to scipy.signal.get_window, which refuses it)",
    r"ctc_loss\((target=(int32|empty)|target_length=int32|output_length=(int32|bool)|mask_index=3)\)":
        "labels are class ids of output, lengths counts within the padded lengths, mask_index a class: TensorFlow "
        "computes on values out of range (a negative loss, 707 for 0 steps), torch refuses most (its answer to "
        "label 6 of 3 classes is another number)",
    r"batch_normalization\((mean|variance|offset|scale)=(scalar_array|python_float|python_int|batched|[0-3]|1\.5|"
    r"\(1\.5,\)|int64\(1\)|float32\(2\.0\)|array\(3\))\)":
        "the statistics are vectors of the axis's length (Keras's documented contract; its JAX backend reads "
        "mean.shape[0], refusing a scalar and a (1, 3) mean; torch refuses most): TensorFlow broadcasts them",
    r"(batch_normalization|rms_normalization|normalize|fliplr|flipud)\(x=(scalar_array|python_float|python_int)\)":
        "the axis these act on (-1; flip's 0 or 1) does not exist in a 0-d tensor (NumPy's rule, torch refuses); "
        "TensorFlow broadcasts the scalar",
    r"clip\(x_min=([1-3]|1\.5|int64\(1\)|float32\(2\.0\)|array\(3\))\)":
        "x_min above x_max: Keras's backends disagree (TensorFlow gives x_min, torch and NumPy's clip x_max), "
        "so minikeras refuses the empty range",
    r"(dot_product_attention\(scale|threshold\(threshold|threshold\(default_value|nan_to_num\(posinf|"
    r"nan_to_num\(neginf|matrix_rank\(tol|kaiser\(beta)=\(1\.5,\)\)":
        "a number argument takes a number, not a 1-tuple (Keras documents a number; its torch backend refuses the "
        "tuple, TensorFlow broadcasts it)",
    r"(dot_product_attention\(flash_attention|convert_to_tensor\(ragged)=('.*'|\[\]|\(.*\)|1\.5|[23]|"
    r"float32\(2\.0\)|array.*|float_array)\)":
        "a flag takes a bool, 0 or 1: a string, list, tuple, array or other number is no flag (Keras's code reads "
        "it by truth value; its torch backend refuses most)",
    r"(bincount|one_hot|multi_hot|convert_to_tensor)\((sparse|ragged)=(1|int64\(1\))\)":
        "sparse=True / ragged=True ask for a sparse or ragged tensor, which minikeras does not have (Keras's torch "
        "backend refuses them the same way)",
    r"(one_hot|multi_hot)\(axis=None\)": "axis is an int (Keras documents -1 for the last axis; its torch backend "
                                          "refuses None)",
    r"(nanmax|nanmin|ptp|multi_hot)\((x|inputs)=empty\)":
        "the max or min of no values is undefined: NumPy refuses a zero-size reduction without identity, and so "
        "does torch; TensorFlow gives -inf or NaN",
    r"(argpartition\(kth=1\.5\)|argpartition\(axis=0\))":
        "kth is an int within the axis (NumPy refuses a float kth and kth 2 of an axis of 2; Keras's TensorFlow "
        "argpartition answers anyway)",
    r"bincount\((x=(float16|float64|scalar_array|python_float|python_int)|weights=\[\])\)":
        "bincount counts non-negative ints of a 1-D (or batched 2-D) tensor: NumPy and torch refuse float ids "
        "(TensorFlow truncates them), 0-d input and weights of another length",
    r"(bartlett|blackman|hamming|hanning|kaiser)\(x=(1\.5|\(1\.5,\)|float32\(2\.0\))\)|"
    r"(top_k|in_top_k)\(k=float32\(2\.0\)\)|segment_\w+\(num_segments=float32\(2\.0\)\)|"
    r"(depth_to_space|space_to_depth)\(block_size=float32\(2\.0\)\)|unstack\(num=float32\(2\.0\)\)|"
    r"image\.pad_images\((top|left)_padding=(1\.5|float32\(2\.0\))\)":
        "a length, count, size or padding is an int, not a float (Keras's torch backend refuses them too; "
        "TensorFlow truncates 1.5 or reads 2.0)",
    r"(quantile|nanquantile)\(q=([23]|1\.5|\(1\.5,\)|\(1, 2\)|float32\(2\.0\)|array.*|float_array)\)":
        "q is within [0, 1] (NumPy and torch refuse others; TensorFlow extrapolates past the data)",
    r"psnr\(max_val=(0|\[\]|\(.*\)|array.*|float_array)\)":
        "max_val is one positive number, the images' range (Keras documents it so): TensorFlow and torch broadcast "
        "an array of them, and 0 gives -inf",
    r"stack\(x=empty_list\)": "there is nothing to stack (NumPy and torch refuse; TensorFlow gives an empty float32)",
    r"unfold\(padding=\[\]\)": "padding is an int or a pair (TensorFlow reads [] as 0; torch refuses)",
    r"image\.gaussian_blur\(sigma=\(0, 0\)\)|image\.elastic_transform\(sigma=0\)|image\.ssim\(filter_sigma=0\)":
        "a Gaussian of width 0 divides by 0: Keras's backends give NaN everywhere; minikeras refuses the width",
    r"image\.scale_and_translate\((images=batched|spatial_dims=(''|\[\]))\)":
        "output_shape has one size per axis of images and spatial_dims names the axes to scale (JAX's "
        "scale_and_translate refuses other shapes); Keras's TensorFlow and torch code ignore output_shape there",
})

DIFFERS_ON_PURPOSE.update({
    r"image\.perspective_transform\(images=int32\)":
        "integer images: the interpolated values are rounded to the nearest int (Keras's JAX backend, through "
        "jax.scipy.ndimage.map_coordinates; minikeras's resize and map_coordinates too); TensorFlow's projective "
        "kernel truncates them",
    r"image\.rgb_to_hsv\(images=one_nan\)":
        "a NaN channel makes the pixel's value NaN (NumPy's max, Keras's torch backend gives the same answer); "
        "TensorFlow's max skips the NaN",
    r"hstack\(xs=bare_array\)": "a bare (2, 3) array stacks its rows as NumPy's hstack does, to (6,) (Keras's torch "
                                "backend too); TensorFlow's gives the (2, 3) input back",
    r"vander\(x=complex64\)": "0 ** 0 is 1 for complex numbers too (NumPy, torch); TensorFlow's complex pow gives NaN",
    r"ctc_loss\(mask_index=(1|2|-1|int64\(1\))\)":
        "the base target holds the class mask_index (the blank) within its length: minikeras emits it as the blank "
        "symbol, as Keras's torch backend (and TensorFlow with mask_index=0); TensorFlow's blank_index rotation "
        "reads it as another class",
    r"(stft|istft)\(sequence_length=(3|array\(3\))\)":
        "an odd-length 'hann' window is periodic (scipy.signal.get_window, used by Keras's JAX backend, and torch); "
        "TensorFlow ignores periodic=True at odd lengths and gives the symmetric window",
    r"istft\(center=(0|1|int64\(1\))\)": "center=0/1 are read as the flags they are; Keras tests `center is True` "
                                         "and `center is False`, so an int flag trims as neither (20 samples here)",
    r"rfft\(x=float64\)": "a float64 signal keeps a float64 spectrum (NumPy, Keras's torch backend); TensorFlow's "
                          "rfft returns float32",
})

REFUSED_ON_PURPOSE.update({
    r"(argsort|count_nonzero|isfinite|isinf|isnan|isneginf|isposinf|isreal|ndim|shape|size)\(x=string\)":
        "a string is no tensor: minikeras has no string dtype, nor have JAX and torch (Keras's other backends "
        "refuse 'a'); Keras's TensorFlow backend makes a tf.string tensor and answers (isnan('a') is False)",
    r"(mean|average|var|std|moments|corrcoef)\(x=empty\)":
        "a mean of no values is 0 / 0: NumPy warns 'Mean of empty slice' and gives NaN, which would reach a loss or "
        "a metric silently; minikeras refuses it (tests/ops/test_reduce.py::test_var_of_nothing_is_refused, the "
        "losses name it: tests/losses/test_loss_input_checks.py)",
    r"average\(weights=(0|1|2|3|1\.5|\(1\.5,\)|int64\(1\)|float32\(2\.0\)|array\(3\))\)":
        "weights have x's shape or are 1-D along axis (Keras's documented contract; NumPy's and JAX's average "
        "refuse others with axis=None): Keras's TensorFlow backend broadcasts a scalar weight (the plain mean), its "
        "torch backend divides sum(x * w) by w (the sum)",
    r"(max|min)\(initial=(\[\]|\(1\.5,\)|\(0, 0\)|\(1, 2\))\)":
        "initial is one number (NumPy: 'Input object to FillWithScalar is not a scalar'; JAX refuses too); "
        "Keras's TensorFlow backend broadcasts the reduction against the tuple",
    r"take_along_axis\(indices=(bool|float16|float64)\)":
        "indices are integers (NumPy, JAX and torch refuse float and bool indices); Keras's TensorFlow backend "
        "casts them to int",
    r"unravel_index\(indices=(int32|float16|float64|python_float)\)|unravel_index\(shape=(\[\]|\(1, 2\))\)":
        "flat indices are ints within the shape's size (NumPy and torch refuse others, JAX clips them); Keras's "
        "TensorFlow backend divides floats and wraps indices past the end (15 of shape (2, 3) gives (1, 0))",
    r"unstack\(num=0\)": "num, when given, is the axis's size: Keras's TensorFlow backend gives [] for num=0, its "
                           "JAX and torch backends ignore num (2 tensors here)",
    r"conv_transpose\(output_padding=(\(0, 0\)|float_array)\)":
        "output_padding is an int or one int per spatial axis: a pair for a 1-D convolution or floats are no valid "
        "value (torch's conv_transpose1d refuses them; Keras's TensorFlow code zips the tuple with the one axis, "
        "dropping the rest, and computes with 0.5)",
    r"conv\(inputs=batched\)": "the kernel has the input's rank (a 3-D kernel convolves a 3-D input; JAX's "
                                 "conv_general_dilated and torch refuse the mismatch); TensorFlow answers anyway",
    r"(average_pool\(inputs=batched\)|extract_sequences\(x=(empty|vector)\))":
        "a window longer than the (padded) input has no position: minikeras refuses it as its conv and pool do "
        "(tests/ops/test_pool.py), as Keras's torch backend (unfold, avg_pool) does; TensorFlow and JAX give a "
        "0-length axis",
    r"extract_sequences\(sequence_length=0\)": "a frame of 0 samples frames nothing (torch's unfold refuses a size of "
                                                 "0; TensorFlow gives (2, 5, 0))",
    r"digitize\(bins=(one_nan|all_nan)\)":
        "bins are monotonic, which NaN bins are not (NumPy's digitize refuses them); TensorFlow's bucketize answers",
    r"corrcoef\(x=batched\)": "corrcoef takes one variable per row of a 2-D tensor at most (NumPy's and JAX's "
                               "corrcoef refuse 3-D input); Keras's TensorFlow backend answers a (1, 2, 2, 2)",
    r"expand_dims\(axis=\(0, 0\)\)": "a repeated axis (NumPy and JAX refuse it; TensorFlow inserts two)",
    r"in_top_k\((targets=int32|predictions=empty)\)":
        "targets are class ids of predictions (a target past the classes is refused: tests/ops/"
        "test_out_of_range_ids.py::test_in_top_k_refuses_targets_outside_the_classes, as Keras's torch backend's "
        "take_along_dim does); TensorFlow answers False",
    r"slice_update\(start_indices=(\(1, 2\)|array\[1, 2\]|array\[3,4\])\)":
        "the block must fit at start_indices: Keras's torch backend refuses a block past the end; TensorFlow and "
        "JAX (XLA's dynamic_update_slice) move the start back until it fits, writing elsewhere than asked",
    r"soft_shrink\(x=bool\)": "a bool is no real number for the activations (every activation refuses bools); "
                                "Keras's TensorFlow soft_shrink answers a bool tensor, its JAX and torch ones floats",
    r"add\(x2=vector\)": "(2, 3, 4) + (3,) does not broadcast (NumPy, JAX and torch refuse it); Keras's TensorFlow "
                           "add reads the vector as a channels-first bias (tf.nn.bias_add over axis 1)",
})

DIFFERS_ON_PURPOSE.update({
    r"select\((choicelist=(python_scalars|mixed_dtypes)|default=(int64\(1\)|array\(3\)))\)":
        "select's dtype is Keras's result_type of the choices and default (float32 for float32 and int32 or "
        "Python floats, as its JAX and torch backends give); Keras's TensorFlow select is "
        "tf.experimental.numpy.select, whose NumPy promotion gives float64",
    r"sparse_categorical_crossentropy\(output=inf\)":
        "probabilities are divided by their sum, then clipped (Keras's JAX and torch backends: inf / inf is NaN); "
        "Keras's TensorFlow backend clips first (inf becomes 1 - epsilon) and answers 0.51",
    r"unravel_index\(indices=(python_int|batched)\)":
        "Keras 3.15's TensorFlow unravel_index divides by the axes in the wrong order for indices that are not "
        "1-D (2 of shape (2, 3) gives (1, 0)); NumPy and Keras's JAX, torch and NumPy backends give (0, 2)",
})

# Keras's refusals that are accidents of its TensorFlow backend, not a rule of
# Keras's (its JAX backend and NumPy answer): minikeras may answer there, or
# refuse cleanly. Patterns of ``"ErrorType: message"``, each with why.
KERAS_TF_LIMITS = {
    r".*Value for attr '\w+' of \w+ is not in the list of allowed values.*|.*No OpKernel was registered.*":
        "TensorFlow has no kernel of the op for that dtype (complex, bool, int, float16)",
    r".*cannot compute \w+ as input #\d+\(zero-based\) was expected to be a \w+ tensor but is a \w+ tensor.*":
        "Keras's TensorFlow backend did not promote mixed dtypes before a kernel",
    r"TypeError: Cannot convert .* to EagerTensor of dtype \w+":
        "Keras's TensorFlow backend converted a constant to the input's dtype (0.5 to int32)",
    r".*Could not find device for node.*": "TensorFlow has no CPU kernel of the op for that dtype",
    r"AttributeError: '(list|tuple)' object has no attribute '(shape|dtype|as_list|ndim)'":
        "Keras's TensorFlow code read .shape of a Python list it had not converted",
    r"TypeError: Expected numeric or variant tensor, got dtype tf.bool.*": "TensorFlow refuses bool there",
    r"ValueError: attn_logits_soft_cap is only supported for JAX.*": "a JAX-only option of Keras",
    r"NotImplementedError: .*": "not implemented by Keras's TensorFlow backend",
    r"AttributeError: '(float|int|NoneType|str|numpy\.\w+)' object has no attribute '\w+'":
        "Keras's TensorFlow code read an attribute of a Python value it had not converted",
    r"TypeError: (bad operand type for unary -: 'list'|can only concatenate list .*)":
        "Keras's TensorFlow code applied arithmetic to an unconverted list",
    r"UnboundLocalError: .*": "a bug in Keras's TensorFlow code",
    r".*Requires start <= limit when delta > 0.*|.*Requires start >= limit when delta < 0.*":
        "TensorFlow's range refuses an empty range (NumPy and JAX give an empty one)",
    r"TypeError: Expected bool for argument '\w+' not .*":
        "TensorFlow wants a Python bool; minikeras takes 0 and 1 as flags too, as NumPy",
    r"InvalidArgumentError: .*(__wrapped__BroadcastTo|__wrapped__Fill|__wrapped__ScatterNd).*":
        "TensorFlow wants the shape as a vector and sizes >= 0 (NumPy takes an int, a negative k of eye...)",
    r"InvalidArgumentError: .*Value for attr 'num_split' of 0 must be at least minimum 1.*":
        "TensorFlow cannot split into one piece by an empty list of split points (NumPy can)",
    r"InvalidArgumentError: .*__wrapped__MatrixDiagPartV3.*":
        "TensorFlow refuses a diagonal offset past the matrix (NumPy gives an empty diagonal)",
    r"InvalidArgumentError: .*Input (matrix )?is not invertible.*":
        "TensorFlow's inverse and solve refuse NaN matrices, which NumPy and JAX give NaN for",
    r"InvalidArgumentError: .*__wrapped__UnsortedSegment\w+.*":
        "TensorFlow refuses segment ids past num_segments (Keras's JAX backend drops them, as minikeras)",
    r"InvalidArgumentError: .*__wrapped__MatrixBandPart.*":
        "TensorFlow limits tril/triu's k to the matrix (NumPy takes any k)",
    r"InvalidArgumentError: .*__wrapped__InvertPermutation.*": "Keras's TensorFlow lu_factor is not batched",
    r"InvalidArgumentError: .*__wrapped__Roll.*shift and axis.*":
        "TensorFlow wants one shift per axis (NumPy broadcasts a single shift)",
    r"TypeError: '[<>]=?' not supported between instances of '(list|int)' and '(list|int|float)'":
        "Keras's TensorFlow code compared an unconverted list",
    r"ValueError: Invalid dtype: list": "Keras's TensorFlow linspace of an unconverted list",
    r"ValueError: data type .* not inexact|TypeError: Input `a` must have `float`-like `dtype`.*":
        "TensorFlow's linear algebra refuses integer matrices (NumPy computes them in float)",
    r"TypeError: input must be a numeric tensor, but got tensor with dtype <dtype: 'bool'>":
        "TensorFlow's real/imag refuse bools",
    r"TypeError: argument of type 'int' is not iterable": "Keras's TensorFlow code iterates an int shape",
    r"ValueError: `features.dtype` must be a floating point tensor.*":
        "TensorFlow's gelu refuses ints (Keras's other backends compute them in float)",
    r"InvalidArgumentError: .*In\[0\] (ndims|mismatch).*": "Keras's TensorFlow corrcoef of a 1-D input",
}

# Calls where Keras's refusal is about the *kind* of a valid value, not the value:
# a NumPy integer where its code wants a Python int (NumPy's own functions take both).
KERAS_TYPE_STRICTNESS = {
    r"[\w.]+\(\w+=(int64\(1\)|array\(3\))\)":
        "Keras's TensorFlow code refuses a NumPy integer (or 0-d integer array) where it takes a Python int",
    r"geomspace\(axis=.*\)": "Keras's TensorFlow geomspace fails to broadcast its endpoints along axis > 0",
    r"image\.gaussian_blur\((kernel_size|sigma)=.*\)":
        "Keras's TensorFlow gaussian_blur indexes a scalar kernel_size or sigma as a pair",
    r"clip\(x_(min|max)=None\)": "minikeras takes None as no bound, as NumPy",
    r"vander\(increasing=[01]\)": "minikeras takes 0 and 1 as flags, as NumPy",
    r"(vstack|hstack|dstack)\(xs=(python_)?scalars\)": "Keras's TensorFlow stacks do not lift scalars as NumPy",
    r"searchsorted\(values=(scalar_array|python_float|python_int)\)":
        "Keras's TensorFlow searchsorted slices a scalar value (NumPy takes one)",
}
