// workpart::nn_compiled: the layers of <workpart/nn/norm.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/norm.hpp>

namespace workpart::nn {
WORKPART_NN_NORM_INSTANCES(, float)
WORKPART_NN_NORM_INSTANCES(, double)
}  // namespace workpart::nn
