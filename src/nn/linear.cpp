// workpart::nn_compiled: the layers of <workpart/nn/linear.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/linear.hpp>

namespace workpart::nn {
WORKPART_NN_LINEAR_INSTANCES(, float)
WORKPART_NN_LINEAR_INSTANCES(, double)
}  // namespace workpart::nn
