"""The NumPy names the simulated CuPy offers: those CuPy 14.2 has too
(tests/backend/test_cupy_api.py checks each against the installed CuPy).
Generated from ``dir(numpy)`` and ``dir(cupy)``; anything else NumPy has is
absent, as on a real GPU."""

TOP = frozenset("""
    abs absolute acos acosh add all allclose amax amin angle any append apply_along_axis apply_over_axes
    arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argpartition argsort argwhere
    around array array2string array_equal array_equiv array_repr array_split array_str asanyarray asarray
    asarray_chkfinite ascontiguousarray asfortranarray asin asinh astype atan atan2 atanh atleast_1d
    atleast_2d atleast_3d average bartlett base_repr binary_repr bincount bitwise_and bitwise_count
    bitwise_invert bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor blackman bool
    bool_ broadcast broadcast_arrays broadcast_shapes broadcast_to byte c_ can_cast cbrt cdouble ceil choose
    clip column_stack common_type complex128 complex64 complexfloating compress concat concatenate conj
    conjugate convolve copy copysign copyto corrcoef correlate cos cosh count_nonzero cov cross csingle
    cumprod cumsum cumulative_prod cumulative_sum deg2rad degrees delete diag diag_indices diag_indices_from
    diagflat diagonal diff digitize divide divmod dot double dsplit dstack dtype e ediff1d einsum empty
    empty_like equal euler_gamma exp exp2 expand_dims expm1 extract eye fabs fill_diagonal finfo fix flatiter
    flatnonzero flip fliplr flipud float16 float32 float64 float_power floating floor floor_divide fmax fmin
    fmod format_float_positional format_float_scientific frexp from_dlpack frombuffer fromfile fromfunction
    fromiter fromstring full full_like gcd generic genfromtxt get_printoptions gradient greater greater_equal
    half hamming hanning heaviside histogram histogram2d histogramdd hsplit hstack hypot i0 identity iinfo
    imag index_exp indices inexact inf inner int16 int32 int64 int8 int_ intc integer interp intersect1d intp
    invert isclose iscomplex iscomplexobj isdtype isfinite isfortran isin isinf isnan isneginf isposinf isreal
    isrealobj isscalar issubdtype iterable ix_ kaiser kron lcm ldexp left_shift less less_equal lexsort
    linspace load loadtxt log log10 log1p log2 logaddexp logaddexp2 logical_and logical_not logical_or
    logical_xor logspace long longlong mask_indices matmul matrix_transpose max maximum may_share_memory mean
    median meshgrid mgrid min min_scalar_type minimum mintypecode mod modf moveaxis multiply nan nan_to_num
    nanargmax nanargmin nancumprod nancumsum nanmax nanmean nanmedian nanmin nanprod nanstd nansum nanvar ndim
    ndindex negative newaxis nextafter nonzero not_equal number ogrid ones ones_like outer packbits pad
    partition percentile permute_dims pi piecewise place poly poly1d polyadd polyfit polymul polysub polyval
    positive pow power printoptions prod promote_types ptp put put_along_axis putmask quantile r_ rad2deg
    radians ravel ravel_multi_index real real_if_close reciprocal remainder repeat require reshape resize
    result_type right_shift rint roll rollaxis roots rot90 round row_stack s_ save savetxt savez
    savez_compressed searchsorted select set_printoptions setdiff1d setxor1d shape shares_memory short sign
    signbit signedinteger sin sinc single sinh size sort sort_complex split sqrt square squeeze stack std
    subtract sum swapaxes take take_along_axis tan tanh tensordot tile trace transpose trapezoid tri tril
    tril_indices tril_indices_from trim_zeros triu triu_indices triu_indices_from true_divide trunc typename
    ubyte ufunc uint uint16 uint32 uint64 uint8 uintc uintp ulong ulonglong union1d unique unique_all
    unique_counts unique_inverse unique_values unpackbits unravel_index unsignedinteger unwrap ushort vander
    var vdot vectorize vsplit vstack where zeros zeros_like
""".split())

LINALG = frozenset("""
    LinAlgError cholesky cond cross det eig eigh eigvals eigvalsh inv lstsq matmul matrix_power matrix_rank
    matrix_transpose norm pinv qr slogdet solve svd tensorinv tensorsolve
""".split())

FFT = frozenset("""
    fft fft2 fftfreq fftn fftshift hfft ifft ifft2 ifftn ifftshift ihfft irfft irfft2 irfftn rfft rfft2
    rfftfreq rfftn
""".split())

STRIDE_TRICKS = frozenset("""
    as_strided sliding_window_view
""".split())
