#version 330 core
// A quad over the slice: position in device pixels, texel coordinates with
// row 0 at the top.
layout (location = 0) in vec2 a_position;
layout (location = 1) in vec2 a_texel;

uniform mat4 u_projection;

out vec2 v_texel;

void main ()
{
  v_texel = a_texel;
  gl_Position = u_projection * vec4 (a_position, 0.0, 1.0);
}
