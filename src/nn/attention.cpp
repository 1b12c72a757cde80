// workpart::nn_compiled: the layers of <workpart/nn/attention.hpp> for float and double, compiled
// once (the header declares them extern template with WORKPART_NN_SEPARATE_COMPILATION).
#include <workpart/nn/attention.hpp>

namespace workpart::nn {
WORKPART_NN_ATTENTION_INSTANCES(, float)
WORKPART_NN_ATTENTION_INSTANCES(, double)
}  // namespace workpart::nn
