#version 450
// Each invocation writes three times its index.
layout(local_size_x = 4) in;
layout(std430, set = 0, binding = 0) buffer Values { uint values[]; };
void main() {
    values[gl_GlobalInvocationID.x] = gl_GlobalInvocationID.x * 3u;
}
