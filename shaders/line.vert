#version 330 core
// Lines in the 3D view's box space (the orthogonal planes' outlines).
layout (location = 0) in vec3 a_position;

uniform mat4 u_mvp;

out float v_alpha; // shape.frag's opacity factor: lines are opaque

void main ()
{
  v_alpha = 1.0;
  gl_Position = u_mvp * vec4 (a_position, 1.0);
}
